import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
// The operator's services (a plugin's own operator-side command): core's main entry, not the
// plugin API (src/plugin.ts says why).
import {
  MANIFEST_FILE,
  canonicalPath,
  clientForHost,
  createGit,
  defaultCredentialsPath,
  domainRuntime,
  escapeControl,
  hostEntry,
  installParameters,
  installThrough,
  loadCredentials,
  loadRepoAtHead,
  newOperationId,
  parseManifest,
  prepareAssessment,
  recordOperatorVerb,
  uncommittedWarning,
} from '@fleet/core';
import { FleetError, type InstallerDescriptor } from '@fleet/core/plugin';
import { Flags, WaitingProgress } from '@fleet/core/command';
import { PluginCommand } from '../../cli/base.js';
import { reconcileHosts } from '../../reconcile/engine.js';
import { readLiveThrough } from '../../reconcile/live.js';
import {
  RECONCILE_SCHEMA,
  reconcileExitCode,
  summarise,
  unattendedRefusal,
  type ReconcileDocument,
  type ReconcileHost,
  type ReconcileMode,
} from '../../reconcile/model.js';
import { logLines, refusalLine, renderClosing, renderHost } from '../../reconcile/render.js';
import { mergeState, pendingSince } from '../../reconcile/state.js';
import {
  acquireLock,
  appendLog,
  loadState,
  reconcilePaths,
  saveState,
  type LoadedState,
  type ReconcilePaths,
} from '../../reconcile/store.js';

const DOMAIN = 'harness-policy';

export default class HarnessReconcile extends PluginCommand {
  static override summary = 'Converge every host running harness-policy to the canonical policy.';
  static override description = `One verb over the fleet (contract §10.3). Every host running harness-policy (or each --host) is read concurrently, with a bound and a per-host timeout, and its three targets — ~/.claude/CLAUDE.md (whole), the policy block of ~/.codex/AGENTS.md and of ~/.gemini/GEMINI.md — are classified exactly as \`fleet drift\` classifies them, against the repository's history: a file equal to a known version (a published one, or one fleet itself wrote there) is stale and safe to replace; a hand change (modified, diverged) or a removed file (deleted) is never written. fleet.yaml, hosts/ and domains/ are read as committed at HEAD (uncommitted changes are not used; a warning names them).

Per host: current; would-update (without --confirm: nothing is written); updated (with --confirm: the host's stale and missing targets are installed in one operation through its controller, each checked against the sha256 just read); deleted (a file fleet wrote that someone removed: never recreated — \`fleet config install … --force\` does); modified (every line known, the whole not: a hand change) and diverged (local lines): never written — the host's other, healable targets still are; adopt or install --force it yourself; offline_pending (unreachable: remembered with the time it was first found pending, and converged by the first run that reaches it); error. A host's state is the worst of its targets.

The state (last_run, canonical_sha, the hosts per state) is kept in $XDG_STATE_HOME/fleet/harness-reconcile.json and a rolling log of the last 500 lines in harness-reconcile.log beside it. A second run changes nothing and reports current for every host it converged. Each host's lines are printed as it settles (a host that hangs holds back only its own), and stderr names the hosts still waited for after a second.

--unattended is for the scheduler: it writes like --confirm (stale and missing targets only, never deleted, modified or diverged) and marks each install unattended in the node's audit, and it is refused (exit 7) unless fleet.yaml opts in with domains.harness-policy.unattended: allow in a reviewed commit — and for any domain whose installer declares a process coupling.

Exit 0 when every host is current or updated; 1 when drift remains (would-update, deleted, modified, diverged, offline_pending, error); 2 on a usage error; 3 when another reconcile holds the lock; 6 when an install failed verification; 7 when --unattended is refused.`;
  static override examples = [
    '<%= config.bin %> harness reconcile',
    '<%= config.bin %> harness reconcile --confirm',
    '<%= config.bin %> harness reconcile --host node-01 --host node-02 --confirm --json',
    '<%= config.bin %> harness reconcile --unattended',
  ];
  static override baseFlags = { ...PluginCommand.repoFlags };
  static override flags = {
    host: Flags.string({ description: 'only this host (repeatable)', multiple: true }),
    confirm: Flags.boolean({
      description: 'write the stale and missing targets (without it: report, write nothing)',
      default: false,
      exclusive: ['unattended'],
    }),
    unattended: Flags.boolean({
      description:
        'scheduled convergence: writes like --confirm, only if fleet.yaml allows it for harness-policy',
      default: false,
      exclusive: ['confirm'],
    }),
    concurrency: Flags.integer({ description: 'hosts worked on at once', default: 16, min: 1 }),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 30_000,
      min: 1,
    }),
  };

  async run(): Promise<ReconcileDocument> {
    const { flags } = await this.parse(HarnessReconcile);
    const mode = flags.unattended ? 'unattended' : flags.confirm ? 'confirm' : 'dry-run';
    const root = await this.findRepo(flags.repo);
    const started = new Date();
    const paths = reconcilePaths(process.env);
    const fleet = await this.loadFleet(root, flags.host);
    const client = await hostClients(fleet.repo, flags.timeout);

    // History read and indexed once for the fleet (two git processes), at HEAD.
    const assessment = await prepareAssessment({
      repo: fleet.repo,
      git: fleet.git,
      source: fleet.source,
      domains: new Map([[DOMAIN, fleet.runtime]]),
      domainFilter: [DOMAIN],
      readLive: readLiveThrough((host) => client(host)),
    });
    const commit = assessment.snapshot.commit;
    const canonicalSha = await canonicalBlob(fleet, commit);

    const release = await acquireLock(paths, started);
    try {
      if (mode === 'unattended') await refuseUnattended(root, fleet, paths, started);
      const loaded = await loadState(paths, started);
      if (loaded.problem) {
        this.note(
          `warning: the previous state ${paths.state} was unusable (${loaded.problem}); moved to ${loaded.movedTo}`,
        );
      }
      const reconciled = await this.reconcileAll(
        fleet,
        { assessment, client, mode, loaded },
        flags,
      );
      return await this.finish(paths, reconciled, {
        fleet,
        loaded,
        mode,
        commit,
        canonicalSha,
      });
    } finally {
      await release();
    }
  }

  /**
   * The domain as registered (its declaration is what the unattended gate reads), the repository
   * as committed at HEAD, and the hosts to work on: every host running the domain, or each
   * --host (an unknown host or one not running the domain: refused before any work).
   */
  private async loadFleet(root: string, only: string[] | undefined): Promise<Fleet> {
    const registry = await this.loadRegistry();
    const declaration = registry.domain(DOMAIN).descriptor;
    const runtime = domainRuntime(declaration, await registry.installer(DOMAIN));
    // One source of truth: fleet.yaml, hosts/ and domains/ as committed at HEAD.
    const git = createGit(root);
    const { repo, source } = await loadRepoAtHead(root, git);
    const warning = uncommittedWarning(source);
    if (warning !== '') this.note(warning);

    const running = Object.entries(repo.manifest.hosts)
      .filter(([, entry]) => entry.domains.includes(DOMAIN))
      .map(([name]) => name)
      .sort();
    const hosts = only ? [...new Set(only)] : running;
    for (const host of hosts) {
      hostEntry(repo, host); // UNKNOWN_HOST (exit 2) before any work
      if (!running.includes(host)) {
        throw new FleetError('UNKNOWN_DOMAIN', `host ${host} does not run ${DOMAIN}`);
      }
    }
    return { declaration, runtime, git, repo, source, running, hosts };
  }

  /** Reconciles every host, streaming each host's lines as it settles (human output). */
  private async reconcileAll(
    fleet: Fleet,
    run: {
      readonly assessment: Awaited<ReturnType<typeof prepareAssessment>>;
      readonly client: (host: string) => HostClient;
      readonly mode: ReconcileMode;
      readonly loaded: LoadedState;
    },
    flags: { readonly concurrency: number },
  ): Promise<ReconcileHost[]> {
    const { hosts, repo, declaration } = fleet;
    const { loaded, client } = run;
    const progress = new WaitingProgress(
      'harness reconcile',
      hosts,
      process.stderr,
      1_000,
      2_000,
      'settled',
    );
    const human = !this.jsonEnabled();
    const reconciled = await reconcileHosts({
      assessment: run.assessment,
      runtime: fleet.runtime,
      hosts,
      mode: run.mode,
      // What `config install` sends besides the files (declared host variables, derived paths).
      parameters: (host) => installParameters(repo, host, declaration),
      // A node that predates the request's repoCommit is sent it again without (core).
      install: async (host, request) => (await installThrough(client(host), request)).receipt,
      record: async (entry) => {
        await recordOperatorVerb(entry);
      },
      newOperationId,
      concurrency: flags.concurrency,
      onHost: (host) => {
        progress.settled(host.host);
        // Streamed: each host's lines as it settles; a hung host holds back only its own. A
        // host pending since an earlier run says since when (a new one: the document says).
        if (human) {
          progress.clear();
          const since =
            host.state === 'offline_pending' && loaded.state
              ? pendingSince(loaded.state, host.host)
              : undefined;
          this.log(
            renderHost(
              since === undefined ? host : { ...host, pendingSince: since },
              escapeControl,
            ),
          );
        }
      },
    });
    progress.finish();
    return reconciled;
  }

  /** Saves the state, logs the run, prints the closing lines and sets the exit code. */
  private async finish(
    paths: ReconcilePaths,
    reconciled: readonly ReconcileHost[],
    run: {
      readonly fleet: Fleet;
      readonly loaded: LoadedState;
      readonly mode: ReconcileMode;
      readonly commit: string;
      readonly canonicalSha: string;
    },
  ): Promise<ReconcileDocument> {
    const { mode, commit, canonicalSha } = run;
    const now = new Date().toISOString();
    const state = mergeState(run.loaded.state, {
      now,
      canonicalSha,
      repoCommit: commit,
      mode,
      hosts: reconciled.map((host) => ({ host: host.host, state: host.state })),
      fleet: run.fleet.running,
    });
    const withPending = reconciled.map((host) => {
      const since = host.state === 'offline_pending' ? pendingSince(state, host.host) : undefined;
      return since === undefined ? host : { ...host, pendingSince: since };
    });
    const document: ReconcileDocument = {
      schema: RECONCILE_SCHEMA,
      generatedAt: now,
      mode,
      repoCommit: commit,
      canonicalSha,
      summary: summarise(withPending),
      hosts: withPending,
    };
    const exitCode = reconcileExitCode(withPending);
    await saveState(paths, state);
    await appendLog(paths, logLines(document, exitCode, escapeControl));
    if (!this.jsonEnabled()) this.log(renderClosing(document));
    process.exitCode = exitCode;
    return document;
  }
}

type HostClient = ReturnType<typeof clientForHost>;

/** The domain, the repository at HEAD and the hosts this run works on (`loadFleet`). */
interface Fleet {
  readonly declaration: InstallerDescriptor;
  readonly runtime: ReturnType<typeof domainRuntime>;
  readonly git: ReturnType<typeof createGit>;
  readonly repo: Awaited<ReturnType<typeof loadRepoAtHead>>['repo'];
  readonly source: Awaited<ReturnType<typeof loadRepoAtHead>>['source'];
  /** Every host running the domain, sorted. */
  readonly running: readonly string[];
  readonly hosts: readonly string[];
}

/** One client per host, made when first asked for, with the credentials file's token. */
async function hostClients(
  repo: Fleet['repo'],
  timeoutMs: number,
): Promise<(host: string) => HostClient> {
  const credentialsPath = defaultCredentialsPath(process.env);
  const credentials = await loadCredentials(credentialsPath);
  const clients = new Map<string, HostClient>();
  return (host) => {
    let found = clients.get(host);
    if (!found) {
      found = clientForHost({ repo, host, credentials, credentialsPath, timeoutMs });
      clients.set(host, found);
    }
    return found;
  };
}

/** The blob id of the canonical whole file at `commit` (CANONICAL_MISSING when there is none). */
async function canonicalBlob(fleet: Fleet, commit: string): Promise<string> {
  const { declaration, git } = fleet;
  const whole = declaration.files.find((file) => file.kind === 'whole') ?? declaration.files[0];
  if (!whole) throw new FleetError('INTERNAL', `${DOMAIN} declares no files`);
  const canonical = canonicalPath(declaration, whole);
  const blob = await git.run(['rev-parse', '--verify', '--quiet', `${commit}:${canonical}`], {
    allowFailure: true,
  });
  const canonicalSha = blob.stdout.trim();
  if (blob.exitCode !== 0 || canonicalSha === '') {
    throw new FleetError(
      'CANONICAL_MISSING',
      `${canonical} is missing at commit ${commit.slice(0, 12)}`,
      {
        problems: [{ file: canonical, message: 'canonical file is missing at the repo commit' }],
      },
    );
  }
  return canonicalSha;
}

/**
 * The unattended gate: the opt-in must hold both in the reviewed commit (read at HEAD) and in the
 * working tree — an uncommitted edit back to deny already disables it; a working tree that does
 * not parse counts as deny. A refusal is logged, and nothing is written (UNATTENDED_REFUSED).
 */
async function refuseUnattended(
  root: string,
  fleet: Fleet,
  paths: ReconcilePaths,
  started: Date,
): Promise<void> {
  let worktreePolicy: 'allow' | 'deny' = 'deny';
  try {
    const text = await readFile(join(root, MANIFEST_FILE), 'utf8');
    worktreePolicy = parseManifest(text).domains[DOMAIN]?.unattended ?? 'deny';
  } catch {
    worktreePolicy = 'deny';
  }
  const committedPolicy = fleet.repo.manifest.domains[DOMAIN]?.unattended ?? 'deny';
  const refusal = unattendedRefusal({
    domain: DOMAIN,
    coupling: fleet.declaration.coupling,
    worktree: worktreePolicy,
    committed: committedPolicy,
  });
  if (refusal === null) return;
  await appendLog(paths, [
    refusalLine(started.toISOString(), 'unattended', 'UNATTENDED_REFUSED', refusal, escapeControl),
  ]);
  throw new FleetError(
    'UNATTENDED_REFUSED',
    `unattended reconcile refused: ${refusal}; nothing was written`,
    {
      suggestions: ['run `fleet harness reconcile --confirm` as the operator instead'],
    },
  );
}
