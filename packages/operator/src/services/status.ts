/**
 * `fleet status`'s service: one screen for the whole fleet — every host asked once for its summary
 * (and a degraded one for its failing health checks), beside the repository's newest drift report
 * and the plugins' own operator state (offline_pending, through their `fleet:status` hooks)
 * (contract §7, "`fleet status`"). Reads fleet.yaml and hosts/ as committed at HEAD, as drift
 * does; writes nothing. Needs no plugin registry: nothing is injected; the hooks are run by the
 * caller, which holds the plugins.
 */
import {
  assembleStatus,
  clientForHost,
  createGit,
  defaultCredentialsPath,
  forEachHost,
  latestDriftReport,
  loadCredentials,
  loadRepoAtHead,
  STATUS_HOOK,
  statusContributionSchema,
  type RepoSource,
  type StatusInput,
  type StatusReport,
} from '@fleet/core';
import { injectable } from '@fleet/core/di';
import type { HostsProgress } from '../progress.js';

export type { StatusReport } from '@fleet/core';

/** What the plugins' `fleet:status` hooks answered (core STATUS_HOOK): each result or failure. */
export interface StatusHookAnswers {
  readonly successes: readonly {
    readonly plugin: { readonly name: string };
    readonly result: unknown;
  }[];
  readonly failures: readonly {
    readonly plugin: { readonly name: string };
    readonly error: Error;
  }[];
}

export interface StatusOptions {
  readonly root: string;
  /** Hosts asked at once. */
  readonly concurrency: number;
  /** Per host. */
  readonly timeoutMs: number;
  /** Runs every plugin's `fleet:status` hook (the caller holds the plugins). */
  readonly runStatusHooks: () => Promise<StatusHookAnswers>;
  /** The commit the repository was read at, before any host is asked. */
  readonly onSource?: (source: RepoSource) => Promise<void>;
  /** The hosts about to be asked: the caller's progress, told of each as it settles. */
  readonly progress?: (hosts: readonly string[]) => HostsProgress;
}

@injectable()
export class StatusService {
  async run(options: StatusOptions): Promise<StatusReport> {
    const { root } = options;
    // What drift reads (contract §7): fleet.yaml and hosts/ as committed at HEAD, named on the
    // first line, with a warning naming what the working tree has not committed.
    const { repo, source } = await loadRepoAtHead(root, createGit(root));
    await options.onSource?.(source);
    const hosts = Object.keys(repo.manifest.hosts).sort();
    const credentialsPath = defaultCredentialsPath(process.env);
    const credentials = await loadCredentials(credentialsPath);
    const progress = options.progress?.(hosts);
    const [outcomes, drift, reconcile] = await Promise.all([
      forEachHost(
        hosts,
        async (host) => {
          const client = clientForHost({
            repo,
            host,
            credentials,
            credentialsPath,
            timeoutMs: options.timeoutMs,
          });
          const summary = await client.summary();
          if (summary.health === 'ok') return { summary };
          // Degraded: why, from the node's health checks (any scope that talks to it may read them).
          const failing = await client.health().then(
            (health) =>
              health.checks
                .filter((check) => check.status !== 'ok')
                .map(({ name, detail }) => ({ name, detail })),
            () => undefined,
          );
          return { summary, failing };
        },
        {
          concurrency: options.concurrency,
          onSettled: (outcome) => progress?.settled(outcome.host),
        },
      ),
      latestDriftReport(root),
      readReconcile(options.runStatusHooks),
    ]);
    progress?.finish();
    return assembleStatus({
      manifest: repo.manifest,
      repoCommit: source.commit,
      now: new Date(),
      hosts: outcomes.map((outcome) => ({
        host: outcome.host,
        outcome: outcome.ok
          ? {
              ok: true,
              value: outcome.value.summary,
              ...(outcome.value.failing === undefined ? {} : { failing: outcome.value.failing }),
            }
          : { ok: false, error: outcome.error },
      })),
      drift,
      reconcile,
    });
  }
}

/**
 * offline_pending from the plugins' own operator state, through their `fleet:status` hooks
 * (core STATUS_HOOK; today the harness reconcile's): each answer checked, a failing hook or a
 * malformed answer named as a warning, never fatal.
 */
async function readReconcile(
  runStatusHooks: () => Promise<StatusHookAnswers>,
): Promise<StatusInput['reconcile']> {
  const { successes, failures } = await runStatusHooks();
  const problems = failures.map(
    (f) => `plugin ${f.plugin.name}: its ${STATUS_HOOK} hook failed: ${f.error.message}`,
  );
  let found: StatusInput['reconcile'] = null;
  for (const { plugin, result } of successes) {
    const parsed = statusContributionSchema.safeParse(result ?? null);
    if (!parsed.success) {
      problems.push(
        `plugin ${plugin.name}: its ${STATUS_HOOK} hook answered something else than a status contribution`,
      );
    } else if (parsed.data !== null && 'problem' in parsed.data) {
      problems.push(parsed.data.problem);
    } else if (parsed.data !== null) {
      found ??= {
        lastRun: parsed.data.lastRun,
        pending: new Map(parsed.data.pending.map((entry) => [entry.host, entry])),
      };
    }
  }
  return problems.length > 0 ? { problem: problems.join('; ') } : found;
}
