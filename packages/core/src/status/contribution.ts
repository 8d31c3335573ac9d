/**
 * What a plugin adds to `fleet status` from the operator's own state (contract §7, `fleet
 * status`): its `fleet:status` oclif hook returns one of these, and the CLI checks it at the
 * boundary like every plugin answer — the CLI never imports a plugin to read its state
 * (docs/architecture.md, "Boundaries"). The harness-policy plugin answers with the harness
 * reconcile's offline_pending hosts; a plugin with nothing to say answers `null`.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/** The oclif hook `fleet status` runs in every plugin that declares it. */
export const STATUS_HOOK = 'fleet:status';

const timestamp = z.lazy(() => z.string().min(1).max(64));

export const statusContributionSchema = z.lazy(() =>
  z.union([
    z.strictObject({
      /** Which state this is, for warnings (`harness reconcile`). */
      source: z.string().min(1).max(64),
      /** When the state was last written. */
      lastRun: timestamp,
      /** Hosts with work still pending because they were unreachable, and since when. */
      pending: z
        .array(
          z.strictObject({ host: z.string().min(1), first_seen: timestamp, last_seen: timestamp }),
        )
        .max(100_000),
    }),
    z.strictObject({
      source: z.string().min(1).max(64),
      /** The state exists but could not be read (it is only named, never changed). */
      problem: z.string().min(1).max(2_000),
    }),
    z.null(),
  ]),
);

export type StatusContribution = z.infer<typeof statusContributionSchema>;

/** What the hook is given (besides oclif's own `config`). */
export interface StatusHookOptions {
  /** The operator's environment (where its state directory is: `XDG_STATE_HOME`, `HOME`). */
  readonly env: Readonly<Record<string, string | undefined>>;
}
