/**
 * The coupled actions of repository-declared files (contract §10.4: a files entry's `action`), node
 * half: after every file of the operation is written and read back, each distinct action of a file
 * that changed runs once, in entry order — the id from the request, the argv, timeout, environment
 * and output rule from the node's own policy (`ctx.actions`, contract §5.1), as the router's reload
 * runs. An action that fails or times out restores every written file, runs each action that ran
 * once more so its process reads the restored files, and fails the install (`ACTION_FAILED`, exit
 * 6: the receipt says rolled back). An unchanged file runs nothing.
 */
import { FleetError } from '../errors.js';
import type {
  ActionOutcome,
  InstallFileRequest,
  ReplaceResult,
  SafeFileWriter,
} from '../interfaces/installer.js';
import type { ActionRunner, NodeContext } from '../interfaces/node-context.js';
import { restoreWritten } from './restore.js';

/** Before any write: every file's action is one the node's policy defines (`POLICY_REFUSED`). */
export function requireFileActions(
  ctx: NodeContext,
  domain: string,
  files: readonly InstallFileRequest[],
): void {
  for (const file of files) {
    if (file.action === undefined || ctx.actions?.has(file.action) === true) continue;
    throw new FleetError(
      'POLICY_REFUSED',
      `${domain}: the node policy defines no action ${JSON.stringify(file.action)} (after ${file.path}); nothing written`,
    );
  }
}

/** One run of a policy action, in one line: how it ended and, if its policy allows, what it said. */
async function runAction(
  actions: ActionRunner,
  id: string,
): Promise<{ ok: boolean; detail: string }> {
  const run = await actions.run(id);
  const program = `action ${id} (${run.argv[0] ?? '?'})`;
  const said = run.output ? `: ${run.output.split('\n')[0]}` : '';
  if (run.timedOut) return { ok: false, detail: `${program} timed out${said}` };
  if (run.exitCode !== 0) {
    const how = run.exitCode === null ? 'did not run to an exit' : `exited ${run.exitCode}`;
    return { ok: false, detail: `${program} ${how}${said}` };
  }
  return { ok: true, detail: `${program} exited 0${said}` };
}

/**
 * Runs the actions of the files that changed (`results` in the order of `files`); returns their
 * outcomes, or throws `ACTION_FAILED` (with `error.actions`) after restoring every written file.
 */
export async function runFileActions(
  ctx: NodeContext,
  files: readonly InstallFileRequest[],
  results: readonly ReplaceResult[],
  writer: SafeFileWriter,
): Promise<ActionOutcome[]> {
  const due: { id: string; paths: string[] }[] = [];
  const skipped: ActionOutcome[] = [];
  files.forEach((file, index) => {
    if (file.action === undefined) return;
    if (results[index]?.unchanged !== false) {
      skipped.push({ kind: file.action, status: 'skipped', detail: `${file.path} unchanged` });
      return;
    }
    const entry = due.find((d) => d.id === file.action);
    if (entry) entry.paths.push(file.path);
    else due.push({ id: file.action, paths: [file.path] });
  });
  const actions = ctx.actions;
  if (due.length === 0 || actions === undefined) return skipped;
  const outcomes: ActionOutcome[] = [];
  for (const [index, { id, paths }] of due.entries()) {
    const run = await runAction(actions, id);
    if (run.ok) {
      outcomes.push({ kind: id, status: 'ok', detail: `after ${paths.join(', ')}: ${run.detail}` });
      continue;
    }
    await restoreWritten(writer, results, run.detail);
    // Each action that ran once more, so its process reads the files as they are again.
    const again: ActionOutcome[] = [];
    for (const ran of due.slice(0, index + 1)) {
      const rerun = await runAction(actions, ran.id);
      again.push({
        kind: ran.id,
        status: rerun.ok ? 'ok' : 'failed',
        detail: `after the restore: ${rerun.detail}`,
      });
    }
    throw Object.assign(
      new FleetError(
        'ACTION_FAILED',
        `the action ${id} after ${paths.join(', ')} failed (${run.detail}); every written file was restored${
          again.every((a) => a.status === 'ok') ? ' and its action run again' : ''
        }`,
      ),
      {
        actions: [
          ...skipped,
          ...outcomes.map((o) => ({ ...o, status: 'rolled-back' as const })),
          { kind: id, status: 'failed' as const, detail: run.detail },
          ...again,
        ],
      },
    );
  }
  return [...skipped, ...outcomes];
}
