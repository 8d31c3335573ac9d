/**
 * Plans (contract §8.3) and the install request they turn into (§8.4), operator side. A plan is the
 * drift assessment of one host's domain plus what an install would do: per file the
 * classification, the redacted diff, the live sha256 it was made against and the desired content;
 * the coupled actions the domain's installer runs. Turning a plan into an install request is pure
 * and refuses what policy refuses: a diverged file without --force (exit 7), a file the node
 * cannot hold (unsupported), a file whose desired content cannot be computed.
 */
import { FleetError, type Problem } from '../errors.js';
import type { CoupledAction } from '../interfaces/domain.js';
import type { DriftReportItem } from '../report/drift-report.js';
import type { FileAssessment } from './file-items.js';
import type { DomainRuntime, FileTarget } from './targets.js';
import { assessHost, type Assessment } from './drift.js';
import { hostEntry } from '../repo/load.js';

export interface FilePlan {
  readonly fileId: string;
  readonly path: string;
  readonly kind: 'whole' | 'block';
  readonly item: DriftReportItem;
  /** The live sha256 the plan was made against (`null`: the file did not exist). */
  readonly liveSha256: string | null;
  /** The managed content an install sends (template space), or `null` when it cannot be computed. */
  readonly desired: string | null;
}

export interface DomainPlan {
  readonly schema: 'fleet.plan/v1';
  readonly host: string;
  readonly domain: string;
  readonly repoCommit: string;
  readonly files: readonly FilePlan[];
  /** Process actions an install of this domain runs after writing (the domain's coupling). */
  readonly actions: readonly CoupledAction[];
  /** True when an install would change something. */
  readonly changes: boolean;
}

export function buildDomainPlan(input: {
  readonly host: string;
  readonly domain: string;
  readonly repoCommit: string;
  readonly actions: readonly CoupledAction[];
  readonly assessed: readonly {
    readonly target: FileTarget;
    readonly assessment: FileAssessment;
  }[];
}): DomainPlan {
  const files = input.assessed.map(({ target, assessment }) => ({
    fileId: target.file.id,
    path: target.path,
    kind: target.file.kind,
    item: assessment.item,
    liveSha256: assessment.liveSha256,
    desired: target.desired.ok ? target.desired.content : null,
  }));
  return {
    schema: 'fleet.plan/v1',
    host: input.host,
    domain: input.domain,
    repoCommit: input.repoCommit,
    files,
    actions: input.actions,
    changes: files.some((file) => file.item.state !== 'current'),
  };
}

export interface InstallSelection {
  /** Install only these node paths (`--file`); default every file of the domain. */
  readonly files?: readonly string[];
  /** Overwrite diverged files (`--force`). */
  readonly force?: boolean;
}

export interface PlannedInstall {
  readonly domain: string;
  readonly files: readonly {
    readonly fileId: string;
    readonly path: string;
    readonly expectedSha256: string | null;
    readonly content: string;
  }[];
}

/** The install request a plan allows, or the policy refusal that stops it (nothing is sent). */
export function plannedInstall(plan: DomainPlan, selection: InstallSelection = {}): PlannedInstall {
  const unknown = (selection.files ?? []).filter(
    (path) => !plan.files.some((file) => file.path === path),
  );
  if (unknown.length > 0) {
    throw new FleetError(
      'USAGE',
      `${unknown.join(', ')} is not a file of domain ${plan.domain} on ${plan.host} (files: ${plan.files
        .map((file) => file.path)
        .join(', ')})`,
    );
  }
  const chosen = plan.files.filter(
    (file) => !selection.files || selection.files.includes(file.path),
  );
  const problems: Problem[] = [];
  for (const file of chosen) {
    if (file.desired === null || file.item.state === 'error') {
      problems.push({
        file: file.path,
        message: `cannot be installed: ${file.item.detail ?? 'error'}`,
      });
    } else if (file.item.state === 'unsupported') {
      problems.push({
        file: file.path,
        message: `the node cannot hold it: ${file.item.detail ?? ''}`,
      });
    }
  }
  if (problems.length > 0) {
    throw new FleetError(
      'FORMAT_UNSUPPORTED',
      `install of ${plan.domain} on ${plan.host} refused: ${problems[0]?.file}: ${problems[0]?.message}`,
      {
        problems,
      },
    );
  }
  const diverged = chosen.filter((file) => file.item.state === 'diverged');
  if (diverged.length > 0 && !selection.force) {
    throw new FleetError(
      'DIVERGED',
      `refused: ${diverged.map((f) => `${f.path} has ${f.item.localLines ?? 0} local line${f.item.localLines === 1 ? '' : 's'}`).join('; ')} (review the plan; adopt with \`fleet config adopt\`, or overwrite with --force)`,
      { suggestions: diverged.map((f) => `fleet config adopt ${plan.host} ${f.path}`) },
    );
  }
  return {
    domain: plan.domain,
    files: chosen.map((file) => ({
      fileId: file.fileId,
      path: file.path,
      expectedSha256: file.liveSha256,
      content: file.desired as string,
    })),
  };
}

/** The plan of one host's domain (or of every domain it runs): reads the node, writes nothing. */
export async function planHost(
  assessment: Assessment,
  host: string,
  domain?: string,
): Promise<DomainPlan[]> {
  const entry = hostEntry(assessment.repo, host);
  if (domain !== undefined && !entry.domains.includes(domain)) {
    throw new FleetError(
      'UNKNOWN_DOMAIN',
      `host ${host} does not run domain ${domain} (it runs: ${entry.domains.join(', ')})`,
    );
  }
  const assessed = await assessHost(assessment, host);
  const names =
    domain === undefined ? entry.domains.filter((name) => assessment.domains.has(name)) : [domain];
  return names.map((name) => {
    const declaration = (assessment.domains.get(name) as DomainRuntime).declaration;
    return buildDomainPlan({
      host,
      domain: name,
      repoCommit: assessment.snapshot.commit,
      actions: declaration.coupling.kind === 'process' ? declaration.coupling.actions : [],
      assessed: assessed.filter((file) => file.target.domain === name),
    });
  });
}
