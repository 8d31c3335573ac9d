/**
 * The parts of the node policy (`policy/schema.ts`, contract §5.1) that other folders of core
 * read: an action id (the wire and a domain's declaration name one), the policy's `supervisor`
 * (the runtime resolves which supervisor runs the node from it), and the small checks they are
 * built from. They sit at the bottom of core's folders (docs/architecture.md, "Core's folders").
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/** True when `text` holds a C0 control character or DEL. */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** An absolute program path, POSIX (`/usr/bin/systemctl`) or Windows (`C:\Windows\…\x.exe`). */
export function isAbsoluteProgram(path: string): boolean {
  return (path.startsWith('/') && !path.startsWith('//')) || /^[A-Za-z]:[\\/][^\\/]/.test(path);
}

/** An action id (`router-reload`): what a request and fleet.yaml name, never an argv. */
export const actionIdSchema = z.lazy(() =>
  z
    .string()
    .regex(
      /^[a-z][a-z0-9._-]{0,63}$/,
      'must be an action id (lower-case letters, digits, ., _, -; at most 64)',
    ),
);

/** An absolute directory (the login PATH's, a package root's, a lab socket's). */
export const absoluteDirectory = z.lazy(() =>
  z
    .string()
    .min(1)
    .max(4096)
    .refine((dir) => !hasControl(dir), 'must not contain control characters')
    .refine(isAbsoluteProgram, 'must be an absolute directory'),
);

/** The node policy's `supervisor`: what runs this node's controller (contract §5.1, §12). */
export const supervisorSchema = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('systemd-user'),
      unit: z
        .string()
        .regex(/^[A-Za-z0-9:_.\\@-]+\.service$/, 'must be a systemd unit name ending in .service'),
    }),
    z.strictObject({
      kind: z.literal('windows-task'),
      task: z
        .string()
        .regex(/^(\\[^\\]+)+$/, 'must be a task path (\\fleet\\controller)')
        .refine((task) => !hasControl(task), 'must not contain control characters'),
    }),
    z.strictObject({
      kind: z.literal('launchd'),
      label: z
        .string()
        .regex(
          /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/,
          'must be a launchd label (dev.fleet.controller)',
        ),
    }),
    z.strictObject({
      kind: z.literal('lab'),
      /** The lab supervisor's control socket (`DIR/nodes/<host>/supervisor.sock`). */
      socket: absoluteDirectory,
    }),
    z.strictObject({ kind: z.literal('none') }),
  ]),
);
export type NodeSupervisor = z.infer<typeof supervisorSchema>;
