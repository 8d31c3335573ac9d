/**
 * The router installer (contract §6, §8.4, §10.1). Coupling: `write-volume` and `reload`.
 *
 * Operator half (pure): the config file is managed whole (the view is the rendered canonical);
 * `check` refuses content that is not YAML (duplicate keys included) with its line, never its
 * text — so a broken canonical is never sent to a node.
 *
 * Node half, one operation:
 * 1. refuse before anything is written: a request that is not exactly the config file, a volume
 *    path or reload command that is malformed or not on the allowlist, a missing secret, content
 *    that is not YAML once its secrets are resolved;
 * 2. write the config file, then the installed volume (the same bytes), each through the
 *    controller's `SafeFileWriter` (compare and swap, backup, atomic durable replace); the volume's
 *    expected sha256 is the one read on the node just before, so a concurrent writer is caught;
 *    if the second write fails the first is restored: both or neither;
 * 3. read both back and compare their sha256;
 * 4. run the host's reload command (fleet.yaml `domains.router.reload`, an argv array) without a
 *    shell, with a minimal environment and a bounded timeout — only when something changed. A
 *    reload that fails or times out restores both files, reloads once more so the router reads
 *    the restored config, and fails the install (`ACTION_FAILED`: the receipt says rolled back,
 *    exit 6).
 */
import {
  FleetError,
  derivedPathParameter,
  redactSecrets,
  reloadCommand,
  resolveSecrets,
  type ActionOutcome,
  type Installer,
  type ManagedFile,
  type NodeContext,
  type NodeInstallRequest,
  type NodeInstallResult,
  type Problem,
  type ReplaceResult,
  type SafeFileWriter,
  restoreWritten,
} from '@fleet/core';
import { routerDomain } from './domain.js';
import { firstProblem, yamlProblems } from './yaml-check.js';

const DOMAIN = routerDomain.domain;
const CONFIG = routerDomain.files[0];
const VOLUME = routerDomain.derivedPaths[0];

/** How long a reload command may run (the whole install request is bounded at 30 s). */
export const RELOAD_TIMEOUT_MS = 10_000;

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Operator half: the whole file is managed; YAML that does not parse is refused. */
function check(file: ManagedFile, content: string): readonly Problem[] {
  return yamlProblems(content, `domains/${DOMAIN}/${file.canonical}`);
}

/** The first line of a command's stderr, redacted and bounded, for an action's detail. */
async function stderrLine(ctx: NodeContext, stderr: string): Promise<string> {
  const line = stderr.split('\n').find((l) => l.trim() !== '') ?? '';
  if (line === '') return '';
  const redacted = redactSecrets(line.trim(), await ctx.secrets());
  return `: ${redacted.length > 200 ? `${redacted.slice(0, 200)}…` : redacted}`;
}

async function runReload(
  ctx: NodeContext,
  argv: readonly [string, ...string[]],
): Promise<{ ok: boolean; detail: string }> {
  const [command, ...args] = argv;
  // No `env`: the controller hands the child a minimal environment (no tokens, no secrets).
  const run = await ctx.processes.run({ command, args, timeoutMs: RELOAD_TIMEOUT_MS });
  if (run.timedOut) {
    return { ok: false, detail: `${command} timed out after ${RELOAD_TIMEOUT_MS} ms` };
  }
  if (run.exitCode !== 0) {
    return {
      ok: false,
      detail: `${command} exited ${run.exitCode}${await stderrLine(ctx, run.stderr)}`,
    };
  }
  return { ok: true, detail: `${command} exited 0` };
}

/** Throws `error` with the actions that ran before it, for the receipt (`error.actions`). */
function withActions(error: FleetError, actions: readonly ActionOutcome[]): FleetError {
  return Object.assign(error, { actions });
}

async function install(
  ctx: NodeContext,
  request: NodeInstallRequest,
  writer: SafeFileWriter,
): Promise<NodeInstallResult> {
  if (request.domain !== DOMAIN) {
    throw new FleetError(
      'BAD_REQUEST',
      `installer for ${DOMAIN} was asked to install domain ${request.domain}`,
    );
  }
  const [file, ...extra] = request.files;
  if (file === undefined || extra.length > 0 || file.fileId !== CONFIG.id) {
    throw new FleetError(
      'BAD_REQUEST',
      `${DOMAIN}: an install writes exactly its config file (${CONFIG.id}); the volume is derived from it`,
    );
  }
  const volumePath = request.parameters[derivedPathParameter(VOLUME.id)] ?? VOLUME.path;
  const reload = reloadCommand(request.parameters);

  // 1. Everything that can refuse, before the first write.
  const text = resolveSecrets(file.content, await ctx.secrets(), file.path);
  const problems = yamlProblems(text, file.path);
  if (problems.length > 0) {
    throw new FleetError(
      'FORMAT_UNSUPPORTED',
      `${firstProblem(problems)} (once its secrets are resolved); nothing written`,
      { problems },
    );
  }
  const bytes = encode(text);
  const volume = await writer.read(volumePath); // the allowlist check of the volume path, too

  // 2-3. The file and the volume, as one operation.
  const results: ReplaceResult[] = [];
  try {
    results.push(
      await writer.replace({
        path: file.path,
        expectedSha256: file.expectedSha256,
        content: bytes,
      }),
    );
    results.push(
      await writer.replace({
        path: volumePath,
        expectedSha256: volume?.sha256 ?? null,
        content: bytes,
      }),
    );
    for (const result of results) {
      const live = (await writer.read(result.path))?.sha256 ?? null;
      if (live !== result.afterSha256) {
        throw new FleetError(
          'VERIFICATION_FAILED',
          `${result.path} reads back as ${live ?? 'missing'}, not the ${result.afterSha256} just written`,
        );
      }
    }
  } catch (error) {
    await restoreWritten(writer, results, error);
    throw error;
  }
  const [config, installed] = results as [ReplaceResult, ReplaceResult];
  const actions: ActionOutcome[] = [
    {
      kind: 'write-volume',
      status: 'ok',
      detail: installed.unchanged
        ? `${volumePath} already equals the config file`
        : `${volumePath} written with the config file`,
    },
  ];

  // 4. The reload, when configured and when something changed.
  if (reload === undefined) {
    actions.push({
      kind: 'reload',
      status: 'skipped',
      detail: 'no reload command configured (fleet.yaml domains.router.reload)',
    });
  } else if (config.unchanged && installed.unchanged) {
    actions.push({ kind: 'reload', status: 'skipped', detail: 'nothing changed: not reloaded' });
  } else {
    const first = await runReload(ctx, reload);
    if (!first.ok) {
      await restoreWritten(writer, results, first.detail);
      const again = await runReload(ctx, reload);
      throw withActions(
        new FleetError(
          'ACTION_FAILED',
          `the reload command failed (${first.detail}); the config file and the installed volume were restored${
            again.ok
              ? ' and the router reloaded them'
              : ` and reloading them failed too (${again.detail})`
          }`,
        ),
        [
          {
            kind: 'write-volume',
            status: 'rolled-back',
            detail: `${volumePath} restored with the config file`,
          },
          { kind: 'reload', status: 'failed', detail: first.detail },
          {
            kind: 'reload',
            status: again.ok ? 'ok' : 'failed',
            detail: `after the restore: ${again.detail}`,
          },
        ],
      );
    }
    actions.push({ kind: 'reload', status: 'ok', detail: first.detail });
  }
  return { files: results, actions, verified: true };
}

/** The domain's installer, loaded lazily by the registry (`register.ts`). */
export const routerInstaller: Installer = {
  domain: DOMAIN,
  view: (_file, renderedCanonical) => renderedCanonical,
  managed: (_file, live) => live,
  check,
  install,
};
