/**
 * The router installer (contract §6, §8.4, §10.1). Coupling: `write-volume` and `reload`.
 *
 * Operator half (pure): the config file is managed whole (the view is the rendered canonical);
 * `check` refuses content that is not YAML (duplicate keys included) with its line, never its
 * text — so a broken canonical is never sent to a node.
 *
 * Node half, one operation:
 * 1. refuse before anything is written: a request that is not exactly the config file, a volume
 *    path the node does not accept, a reload action the node policy does not define, a missing
 *    secret, content that is not YAML once its secrets are resolved;
 * 2. write the config file, then the installed volume (the same bytes), each through the
 *    controller's `SafeFileWriter` (compare and swap, backup, atomic durable replace); the volume's
 *    expected sha256 is the one read on the node just before, so a concurrent writer is caught;
 *    if the second write fails the first is restored: both or neither;
 * 3. read both back and compare their sha256;
 * 4. run the reload action — the request names its id (fleet.yaml `domains.router.reload`), the
 *    node policy defines its argv, timeout and whether its output may travel back (contract §5.1):
 *    no shell, a minimal environment — only when something changed. A reload that fails or times
 *    out restores both files, reloads once more so the router reads the restored config, and
 *    fails the install (`ACTION_FAILED`: the receipt says rolled back, exit 6). What the reload
 *    printed stays on the node unless its policy entry says `output: return`.
 */
import {
  FleetError,
  RELOAD_ROLE,
  derivedPathParameter,
  oneFileRequest,
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
  writeVerified,
} from '@fleet/core/plugin';
import { routerDomain } from './domain.js';
import { firstProblem, yamlProblems } from './yaml-check.js';

const DOMAIN = routerDomain.domain;
const CONFIG = routerDomain.files[0];
const VOLUME = routerDomain.derivedPaths[0];

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Operator half: the whole file is managed; YAML that does not parse is refused. */
function check(file: ManagedFile, content: string): readonly Problem[] {
  return yamlProblems(content, `domains/${DOMAIN}/${file.canonical}`);
}

/** Runs the node policy's reload action `id` (the controller runs it: argv, timeout, env). */
async function runReload(ctx: NodeContext, id: string): Promise<{ ok: boolean; detail: string }> {
  if (!ctx.actions) {
    throw new FleetError('POLICY_REFUSED', `this host runs no node policy actions: ${id} not run`);
  }
  const run = await ctx.actions.run(id);
  const program = `action ${id} (${run.argv[0] ?? '?'})`;
  // Only an action whose policy entry says `output: return` has output; it is redacted and cut.
  const said = run.output ? `: ${run.output.split('\n')[0]}` : '';
  if (run.timedOut) return { ok: false, detail: `${program} timed out${said}` };
  if (run.exitCode !== 0) {
    return {
      ok: false,
      detail: `${program} ${run.exitCode === null ? 'did not run to an exit' : `exited ${run.exitCode}`}${said}`,
    };
  }
  return { ok: true, detail: `${program} exited 0${said}` };
}

async function install(
  ctx: NodeContext,
  request: NodeInstallRequest,
  writer: SafeFileWriter,
): Promise<NodeInstallResult> {
  const file = oneFileRequest(request, {
    domain: DOMAIN,
    fileId: CONFIG.id,
    name: 'its config file',
    why: 'the volume is derived from it',
  });
  const volumePath = request.parameters[derivedPathParameter(VOLUME.id)] ?? VOLUME.path;
  const reload = request.actions?.[RELOAD_ROLE];
  if (reload !== undefined && ctx.actions?.has(reload) !== true) {
    throw new FleetError(
      'POLICY_REFUSED',
      `${DOMAIN}: the node policy defines no action ${JSON.stringify(reload)} for the reload; nothing written`,
    );
  }

  // 1. Everything that can refuse, before the first write.
  const bytes = await resolvedYaml(ctx, file.content, file.path);
  const volume = await writer.read(volumePath); // the allowlist check of the volume path, too

  // 2-3. The file and the volume, as one operation.
  const results = await writeVerified(writer, [
    { path: file.path, expectedSha256: file.expectedSha256, content: bytes },
    { path: volumePath, expectedSha256: volume?.sha256 ?? null, content: bytes },
  ]);
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
      detail: 'no reload action configured (fleet.yaml domains.router.reload)',
    });
  } else if (config.unchanged && installed.unchanged) {
    actions.push({ kind: 'reload', status: 'skipped', detail: 'nothing changed: not reloaded' });
  } else {
    actions.push(await reloadOrRestore(ctx, writer, reload, results, volumePath));
  }
  return { files: results, actions, verified: true };
}

/** The config's bytes with its secrets resolved, refused unless they are still YAML. */
async function resolvedYaml(ctx: NodeContext, content: string, path: string): Promise<Uint8Array> {
  const text = resolveSecrets(content, await ctx.secrets(), path);
  const problems = yamlProblems(text, path);
  if (problems.length > 0) {
    throw new FleetError(
      'FORMAT_UNSUPPORTED',
      `${firstProblem(problems)} (once its secrets are resolved); nothing written`,
      { problems },
    );
  }
  return encode(text);
}

/**
 * Runs the reload; when it fails, restores both files, reloads once more so the router reads
 * them, and fails the install (`ACTION_FAILED`) with all three actions.
 */
async function reloadOrRestore(
  ctx: NodeContext,
  writer: SafeFileWriter,
  reload: string,
  results: readonly ReplaceResult[],
  volumePath: string,
): Promise<ActionOutcome> {
  const first = await runReload(ctx, reload);
  if (first.ok) return { kind: 'reload', status: 'ok', detail: first.detail };
  await restoreWritten(writer, results, first.detail);
  const again = await runReload(ctx, reload);
  throw new FleetError(
    'ACTION_FAILED',
    `the reload failed (${first.detail}); the config file and the installed volume were restored${
      again.ok
        ? ' and the router reloaded them'
        : ` and reloading them failed too (${again.detail})`
    }`,
    {
      actions: [
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
    },
  );
}

/** The domain's installer, loaded lazily by the registry (`register.ts`). */
export const routerInstaller: Installer = {
  domain: DOMAIN,
  view: (_file, renderedCanonical) => renderedCanonical,
  managed: (_file, live) => live,
  check,
  install,
};
