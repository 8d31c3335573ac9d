/**
 * How a host's controller listens (its `controller serve` flags as data) and a bootstrap plan's
 * `listen`: the shapes the wire and the runtime plan both read, so they sit at the bottom of
 * core's folders (docs/architecture.md, "Core's folders"); deriving them from fleet.yaml stays in
 * `runtime/listen.ts`.
 */
import { isIP } from 'node:net';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/** How the controller of a host listens: its `controller serve` flags, as data. */
export interface ControllerListen {
  /** `--bind`: an IP literal (`0.0.0.0` for a DNS name: every interface). */
  readonly bind: string;
  /** `--port`. */
  readonly port: number;
  /** Serves https (`--tls-cert`/`--tls-key`, a certificate made on the node). */
  readonly tls: boolean;
  /** `--allowed-host`: `name:port` values the Host check accepts beyond the machine's own. */
  readonly allowedHosts: readonly string[];
}

const listenFields = () => ({
  bind: z.string().refine((value) => isIP(value) !== 0, 'must be an IP address'),
  port: z.number().int().min(1).max(65535),
  tls: z.boolean(),
  allowedHosts: z.array(z.string().regex(/^[a-z0-9.-]+:\d{1,5}$/, 'must be name:port')).readonly(),
});

/** The wire and file form of {@link ControllerListen} (strict: contract §5.2). */
export const controllerListenSchema = z.lazy(() => z.strictObject(listenFields()));

/**
 * A bootstrap plan's `listen`: {@link ControllerListen} and fleet.yaml's pinned `tls.fingerprint`
 * (`null`: none pinned), which the node's certificate must match before anything is activated.
 */
export const plannedListenSchema = z.lazy(() =>
  z.strictObject({
    ...listenFields(),
    fingerprint: z
      .string()
      .regex(/^sha256:([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/, 'must be a sha256: fingerprint')
      .nullable(),
  }),
);
/** A bootstrap plan's `listen` (see {@link plannedListenSchema}). */
export type PlannedListen = z.infer<typeof plannedListenSchema>;
