/**
 * The coupled actions of the file installers (`fileInstaller`, `wholeFileInstaller`), node half —
 * the one path for a repository-declared file's own `action` (contract §10.4) and for the roles a
 * request gives the node policy's actions (`request.actions`: `validate`, `reload`, `restart`;
 * `config/parameter-names.ts`), for plugin-declared files too. Every id is the request's, every
 * argv, timeout, environment and output rule the node's own policy (`ctx.actions`, contract §5.1).
 *
 * - `validate` runs on each changed file's staged new content, beside the live file, before it
 *   replaces it (`ReplaceRequest.beforeRename`); a refusal replaces nothing (`ACTION_FAILED`, and
 *   any file already written in the operation is restored).
 * - After every file is written and read back: each distinct files-entry action of a file that
 *   changed, in entry order; then `reload` and `restart`, once, when any file changed. One that
 *   fails or times out restores every written file, runs each action that ran once more so its
 *   process reads the restored files, and fails the install (`ACTION_FAILED`, exit 6: the receipt
 *   says rolled back). An unchanged file runs nothing.
 */
import { FleetError, isFleetError, type FleetErrorOptions } from '../errors.js';
import type {
  ActionOutcome,
  InstallFileRequest,
  ReplaceResult,
  SafeFileWriter,
} from '../interfaces/installer.js';
import type { ActionRunner, NodeContext } from '../interfaces/node-context.js';
import { RELOAD_ROLE, RESTART_ROLE, VALIDATE_ROLE } from '../config/parameter-names.js';
import { outputTail } from '../policy/actions.js';
import { restoreWritten } from './restore.js';
import type { PlannedWrite } from './transaction.js';

/**
 * A coupled action failed (contract §7: exit 6). `actions` is every action's outcome as the
 * receipt shows it — what ran, what was rolled back, what failed, what ran again after the restore
 * — which the controller puts in the receipt (`FleetError.actions`); `toolOutput`, when the node
 * policy returns the action's output, the tail of what the failed action printed
 * ({@link outputTail}: the tool's own reasons, shown under the one-line error).
 */
export class ActionFailedError extends FleetError {
  constructor(message: string, actions: readonly ActionOutcome[], options?: FleetErrorOptions) {
    super('ACTION_FAILED', message, { ...options, actions });
    this.name = 'ActionFailedError';
  }
}

/** The roles a request names, in the order an install runs them after its writes. */
const AFTER_WRITE_ROLES = [RELOAD_ROLE, RESTART_ROLE] as const;

/**
 * Before any write: every action the request names — each file's own and each role's — is one the
 * node's policy defines (`POLICY_REFUSED`, nothing written).
 */
export function requireFileActions(
  ctx: NodeContext,
  domain: string,
  files: readonly InstallFileRequest[],
  roles: Readonly<Record<string, string>> = {},
): void {
  for (const file of files) {
    if (file.action === undefined || ctx.actions?.has(file.action) === true) continue;
    throw new FleetError(
      'POLICY_REFUSED',
      `${domain}: the node policy defines no action ${JSON.stringify(file.action)} (after ${file.path}); nothing written`,
    );
  }
  for (const [role, id] of Object.entries(roles)) {
    if (ctx.actions?.has(id) === true) continue;
    throw new FleetError(
      'POLICY_REFUSED',
      `${domain}: the node policy defines no action ${JSON.stringify(id)} (${role}); nothing written`,
    );
  }
}

/**
 * One run of a policy action: how it ended in one line and, if its policy returns the output, the
 * output's first line in it and its tail ({@link outputTail}) beside it.
 */
async function runAction(
  actions: ActionRunner,
  id: string,
  file?: { readonly staged: string; readonly path: string },
): Promise<{ ok: boolean; detail: string; output?: string }> {
  let run;
  try {
    run = await actions.run(id, file === undefined ? undefined : { file: file.staged });
  } catch (error) {
    // Before a rename the refusal is the replace's own error (nothing replaced); after the writes
    // a policy that cannot run the action as asked (`{file}` where none is given) fails it.
    if (file !== undefined || !isFleetError(error)) throw error;
    return { ok: false, detail: `action ${id}: ${error.message}` };
  }
  const program = `action ${id} (${run.argv[0] ?? '?'})`;
  const text = readableOutput(run.output, file);
  const said = text ? `: ${text.split('\n')[0]}` : '';
  const tail = outputTail(text);
  const output = tail === undefined ? {} : { output: tail };
  if (run.timedOut) return { ok: false, detail: `${program} timed out${said}`, ...output };
  if (run.exitCode !== 0) {
    const how = run.exitCode === null ? 'did not run to an exit' : `exited ${run.exitCode}`;
    return { ok: false, detail: `${program} ${how}${said}`, ...output };
  }
  return { ok: true, detail: `${program} exited 0${said}` };
}

/**
 * What a tool said, as its reader wants it: the staged file it checked named by the path it would
 * replace (the operator never saw `~/.ssh/.fleet-tmp-…`), and line ends without a carriage return
 * (a CRLF tool's `\r` would otherwise print escaped at every line end).
 */
export function readableOutput(
  output: string | undefined,
  file?: { readonly staged: string; readonly path: string },
): string | undefined {
  if (output === undefined) return undefined;
  const lines = output.replace(/\r+(?=\n|$)/g, '');
  return file === undefined ? lines : lines.split(file.staged).join(file.path);
}

/**
 * The `validate` role of a request, as the writes it checks (node half, before any write): each
 * planned write gets a `beforeRename` that runs the node policy's validate action on the staged
 * file. `outcomes` collects each file's outcome, in order; `checked` names each path it ran for (a
 * writer that never called it is caught by {@link requireValidated}).
 */
export function withValidation(
  ctx: NodeContext,
  roles: Readonly<Record<string, string>>,
  writes: readonly PlannedWrite[],
): { writes: PlannedWrite[]; outcomes: ActionOutcome[]; checked: Set<string> } {
  const id = roles[VALIDATE_ROLE];
  const outcomes: ActionOutcome[] = [];
  const checked = new Set<string>();
  const actions = ctx.actions;
  if (id === undefined || actions === undefined) return { writes: [...writes], outcomes, checked };
  const validated = writes.map((write) => ({
    ...write,
    async beforeRename(staged: string): Promise<void> {
      const run = await runAction(actions, id, { staged, path: write.path });
      checked.add(write.path);
      if (run.ok) {
        outcomes.push({
          kind: VALIDATE_ROLE,
          status: 'ok',
          detail: `${write.path}: ${run.detail}`,
        });
        return;
      }
      throw new ActionFailedError(
        `the validate action ${id} refused the new ${write.path} (${run.detail}); it did not replace the old file, and nothing of this install stays written`,
        [
          ...outcomes.map((o) => ({ ...o, status: 'rolled-back' as const })),
          { kind: VALIDATE_ROLE, status: 'failed', detail: `${write.path}: ${run.detail}` },
        ],
        run.output === undefined ? {} : { toolOutput: run.output },
      );
    },
  }));
  return { writes: validated, outcomes, checked };
}

/**
 * After the writes: every changed file was validated, when the request names a validate action. A
 * writer that skips `beforeRename` (one older than this core) must not let unchecked content stand:
 * what was written is restored and the install fails (`ACTION_FAILED`).
 */
export async function requireValidated(
  roles: Readonly<Record<string, string>>,
  results: readonly ReplaceResult[],
  checked: ReadonlySet<string>,
  writer: SafeFileWriter,
): Promise<void> {
  const id = roles[VALIDATE_ROLE];
  if (id === undefined) return;
  const unchecked = results.find((r) => !r.unchanged && !checked.has(r.path));
  if (unchecked === undefined) return;
  const detail = `the node's writer replaced ${unchecked.path} without running the validate action ${id} on it`;
  await restoreWritten(writer, results, detail);
  throw new ActionFailedError(`${detail}; every written file was restored`, [
    { kind: VALIDATE_ROLE, status: 'failed', detail },
  ]);
}

/** The actions due after the writes, in order: the changed files' own, then reload and restart. */
function dueActions(
  files: readonly InstallFileRequest[],
  results: readonly ReplaceResult[],
  roles: Readonly<Record<string, string>>,
): { due: { kind: string; id: string; after: string }[]; skipped: ActionOutcome[] } {
  const due: { kind: string; id: string; paths: string[] }[] = [];
  const skipped: ActionOutcome[] = [];
  files.forEach((file, index) => {
    if (file.action === undefined) return;
    if (results[index]?.unchanged !== false) {
      skipped.push({ kind: file.action, status: 'skipped', detail: `${file.path} unchanged` });
      return;
    }
    const entry = due.find((d) => d.id === file.action);
    if (entry) entry.paths.push(file.path);
    else due.push({ kind: file.action, id: file.action, paths: [file.path] });
  });
  const changed = results.filter((r) => !r.unchanged).map((r) => r.path);
  for (const role of AFTER_WRITE_ROLES) {
    const id = roles[role];
    if (id === undefined) continue;
    if (changed.length === 0)
      skipped.push({ kind: role, status: 'skipped', detail: 'no file changed' });
    else due.push({ kind: role, id, paths: changed });
  }
  return { due: due.map((d) => ({ ...d, after: d.paths.join(', ') })), skipped };
}

/**
 * Runs the actions due after the writes (`results` in the order of `files`; `roles` the request's
 * `actions`); returns their outcomes after `before` (the validate outcomes), or throws
 * {@link ActionFailedError} after restoring every written file.
 */
export async function runFileActions(
  ctx: NodeContext,
  files: readonly InstallFileRequest[],
  results: readonly ReplaceResult[],
  writer: SafeFileWriter,
  roles: Readonly<Record<string, string>> = {},
  before: readonly ActionOutcome[] = [],
): Promise<ActionOutcome[]> {
  const { due, skipped } = dueActions(files, results, roles);
  const actions = ctx.actions;
  if (due.length === 0 || actions === undefined) return [...before, ...skipped];
  const outcomes: ActionOutcome[] = [];
  for (const [index, { kind, id, after }] of due.entries()) {
    const run = await runAction(actions, id);
    if (run.ok) {
      outcomes.push({ kind, status: 'ok', detail: `after ${after}: ${run.detail}` });
      continue;
    }
    await restoreWritten(writer, results, run.detail);
    // Each action that ran once more, so its process reads the files as they are again.
    const again: ActionOutcome[] = [];
    for (const ran of due.slice(0, index + 1)) {
      const rerun = await runAction(actions, ran.id);
      again.push({
        kind: ran.kind,
        status: rerun.ok ? 'ok' : 'failed',
        detail: `after the restore: ${rerun.detail}`,
      });
    }
    throw new ActionFailedError(
      `the action ${id} (${kind}) after ${after} failed (${run.detail}); every written file was restored${
        again.every((a) => a.status === 'ok') ? ' and its action run again' : ''
      }`,
      [
        ...before.map((o) => ({ ...o, status: 'rolled-back' as const })),
        ...skipped,
        ...outcomes.map((o) => ({ ...o, status: 'rolled-back' as const })),
        { kind, status: 'failed', detail: run.detail },
        ...again,
      ],
      run.output === undefined ? {} : { toolOutput: run.output },
    );
  }
  return [...before, ...skipped, ...outcomes];
}
