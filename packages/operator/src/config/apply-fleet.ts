/**
 * `fleet apply` (contract §7), the verb's service: what the command's flags name, made into one
 * apply run — the saved plan read (`--plan`), the domains checked, the repository loaded at HEAD,
 * the hosts chosen — then `runApply` (./apply.ts) over them, and the plan saved where asked
 * (`--out`: never over an existing file, said before any host is asked).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import type { ApplyDocument, ApplyHostResult, Registry, RepoSource } from '@fleet/core';
import * as core from '@fleet/core';
import type { ApplyRun } from './apply.js';
import { loadFleetContext } from './context.js';
import type { HostsProgress } from '../progress.js';
import { runApply, savedPlan } from './apply.js';

/** The renderers of a host's line and of the summary, for the command to print (pure). */
export { renderApplyHost, renderApplySummary } from './render.js';

export interface ApplyFleetInput {
  readonly root: string;
  /** Loaded once the saved plan (if any) was read: a plan that does not parse loads no plugin. */
  readonly loadRegistry: () => Promise<Registry>;
  /** Only these hosts (default: every host of fleet.yaml). */
  readonly hosts?: readonly string[];
  /** Only these domains. */
  readonly domains?: readonly string[];
  /** A saved plan to install exactly (its hosts, domains and `force` replace the options). */
  readonly planFile?: string;
  /** Where to save the plan (never over an existing file). */
  readonly out?: string;
  readonly confirm: boolean;
  readonly force: boolean;
  readonly concurrency: number;
  /** Per request. */
  readonly timeoutMs: number;
  /** The commit the repository was read at, as soon as it is known (before any host is asked). */
  readonly onSource?: (source: RepoSource) => Promise<void>;
  readonly progress?: (hosts: readonly string[]) => HostsProgress;
  /** Each host's result as it settles (after the progress heard of it). */
  readonly onHost?: (result: ApplyHostResult) => void;
  /** Progress lines (a coupled restart settling), on stderr. */
  readonly onWait?: (line: string) => void;
}

/** Plans every host (and with `confirm` installs); the document says what each host did. */
export async function applyFleet(input: ApplyFleetInput): Promise<ApplyDocument> {
  if (input.out !== undefined) refuseExistingOut(input.out);
  const saved = input.planFile
    ? core.parseApplyPlan(await readFile(input.planFile, 'utf8'), input.planFile)
    : undefined;
  const registry = await input.loadRegistry();
  const domainFilter = saved
    ? [...new Set(saved.hosts.flatMap((host) => host.domains.map((d) => d.domain)))].sort()
    : input.domains;
  for (const name of domainFilter ?? []) registry.domain(name); // UNKNOWN_DOMAIN, exit 2
  const context = await loadFleetContext({
    root: input.root,
    registry,
    ...(domainFilter ? { domains: domainFilter } : {}),
    timeoutMs: input.timeoutMs,
  });
  await input.onSource?.(context.source);
  const hosts = saved
    ? saved.hosts.map((host) => host.host)
    : [...new Set(input.hosts ?? Object.keys(context.repo.manifest.hosts).sort())];
  const progress = input.progress?.(hosts);
  let run: ApplyRun;
  try {
    run = await runApply({
      context,
      hosts,
      ...(domainFilter ? { domainFilter } : {}),
      force: input.force,
      confirm: input.confirm,
      ...(saved ? { saved } : {}),
      ...(input.planFile ? { planFile: input.planFile } : input.out ? { planFile: input.out } : {}),
      concurrency: input.concurrency,
      onHost: (result) => {
        progress?.settled(result.host);
        input.onHost?.(result);
      },
      ...(input.onWait ? { onWait: input.onWait } : {}),
    });
  } finally {
    progress?.finish();
    context.close();
  }
  if (input.out !== undefined) await savePlan(input.out, run);
  return run.document;
}

/** Said before any host is asked; the write itself is exclusive all the same. */
function refuseExistingOut(out: string): void {
  if (existsSync(out))
    throw new core.FleetError(
      'USAGE',
      `cannot write the plan to ${out}: it exists (an existing plan is never overwritten)`,
    );
}

/** The plan, saved for `--plan` (0600, never over an existing file). */
async function savePlan(out: string, run: ApplyRun): Promise<void> {
  try {
    await writeFile(out, `${JSON.stringify(savedPlan(run.document, run.plans), null, 2)}\n`, {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (error) {
    throw new core.FleetError(
      'USAGE',
      `cannot write the plan to ${out}: ${String((error as NodeJS.ErrnoException).code ?? error)} (an existing plan is never overwritten)`,
    );
  }
}
