/**
 * Plans (contract §8.3) and the install request they turn into (§8.4), operator side. A plan is the
 * drift assessment of one host's domain plus what an install would do: per file the
 * classification, the redacted diff, the live sha256 it was made against and the desired content;
 * the coupled actions the domain's installer runs. Turning a plan into an install request is pure
 * and refuses what policy refuses: a hand change without --force (`diverged`, `modified`, `deleted`:
 * exit 7, the code of the worst), a file the node cannot hold (unsupported), a file whose desired
 * content cannot be computed or the domain's checks refuse (error).
 */
import { ERROR_CODES, FleetError, type ErrorCode, type Problem } from '../errors.js';
import type { BlockMarkers, CoupledAction, DomainDeclaration } from '../interfaces/domain.js';
import type { DriftState } from '../interfaces/drift.js';
import type { DriftReportItem } from '../report/drift-report.js';
import type { FileAssessment } from './file-items.js';
import type { DomainRuntime } from './domain-runtime.js';
import type { FileTarget } from './file-target.js';
import { assessFilesAndProbes, assessHost, type Assessment } from './assessment.js';
import { hostEntry, type FleetRepo } from '../repo/load.js';
import { installActions } from './parameters.js';
import { VALIDATE_ROLE } from './parameter-names.js';

export interface FilePlan {
  readonly fileId: string;
  readonly path: string;
  readonly kind: 'whole' | 'block';
  readonly item: DriftReportItem;
  /** The live sha256 the plan was made against (`null`: the file did not exist). */
  readonly liveSha256: string | null;
  /** The managed content an install sends (template space), or `null` when it cannot be computed. */
  readonly desired: string | null;
  /** A repository-declared block file's markers (contract §10.4): the node needs them to splice. */
  readonly markers?: BlockMarkers;
  /** A repository-declared file's mode (`"0600"`, contract §10.4): the node writes it with it. */
  readonly mode?: string;
  /** A repository-declared file's node policy action id, run after it is written (§10.4). */
  readonly action?: string;
  /**
   * For an `error` or `unsupported` file: the error code of what keeps it from being installed
   * (the node's refusal, `DOMAIN_NOT_SERVED`, `POLICY_REFUSED`, `SYMLINK_REFUSED`, …; or
   * `RENDER_FAILED`), which an install's refusal carries as its own.
   */
  readonly code?: string;
  /** `false`: a files entry that is not a template; the node resolves no secret in it (§10.4). */
  readonly template?: false;
  /** `base64`: the source is not UTF-8 text; `desired` is its bytes in base64 (§10.4). */
  readonly encoding?: 'base64';
}

export interface DomainPlan {
  readonly schema: 'fleet.plan/v1';
  readonly host: string;
  readonly domain: string;
  readonly repoCommit: string;
  /** fleet.yaml, hosts/ and domains/ paths with uncommitted changes (not used: the plan reads the commit). */
  readonly uncommitted?: readonly string[];
  readonly files: readonly FilePlan[];
  /**
   * The domain's derived layer (the router's installed volume, contract §10.1), classified by its
   * prober: an install writes it with the files, and refuses a hand change in it without --force.
   * Absent when the plan was made without the domain's probers.
   */
  readonly derived?: readonly DriftReportItem[];
  /**
   * Process actions an install of this domain runs after writing: the domain's coupling, then each
   * changing file's own action (a files entry's `action`, contract §10.4), by its policy id.
   */
  readonly actions: readonly CoupledAction[];
  /** True when an install would change something. */
  readonly changes: boolean;
}

export function buildDomainPlan(input: {
  readonly host: string;
  readonly domain: string;
  readonly repoCommit: string;
  readonly uncommitted?: readonly string[];
  readonly actions: readonly CoupledAction[];
  /** The domain's files are declared in the repository: block files carry their markers. */
  readonly repoDeclared?: boolean;
  readonly assessed: readonly {
    readonly target: FileTarget;
    readonly assessment: FileAssessment;
  }[];
  /** The domain's derived items (its probers' `derived` layer), when they were read. */
  readonly derived?: readonly DriftReportItem[];
}): DomainPlan {
  const files = input.assessed.map(({ target, assessment }) => ({
    fileId: target.file.id,
    path: target.path,
    kind: target.file.kind,
    item: assessment.item,
    liveSha256: assessment.liveSha256,
    desired: target.desired.ok ? target.desired.content : null,
    ...(input.repoDeclared === true && target.file.kind === 'block' && target.file.markers
      ? { markers: target.file.markers }
      : {}),
    ...(target.file.mode === undefined ? {} : { mode: target.file.mode }),
    ...(target.file.action === undefined ? {} : { action: target.file.action }),
    ...(assessment.code === undefined ? {} : { code: assessment.code }),
    ...(target.file.template === false ? { template: false as const } : {}),
    ...(target.desired.ok && target.desired.encoding !== undefined
      ? { encoding: target.desired.encoding }
      : {}),
  }));
  // A file's own action runs only when an install changes the file: listed for those only.
  const fileActions = files.flatMap((file): CoupledAction[] =>
    file.action === undefined || file.item.state === 'current'
      ? []
      : [
          {
            kind: file.action,
            description: `node policy action ${file.action}, after ${file.path} is written`,
          },
        ],
  );
  return {
    schema: 'fleet.plan/v1',
    host: input.host,
    domain: input.domain,
    repoCommit: input.repoCommit,
    ...(input.uncommitted && input.uncommitted.length > 0
      ? { uncommitted: input.uncommitted }
      : {}),
    files,
    ...(input.derived && input.derived.length > 0 ? { derived: input.derived } : {}),
    actions: [...input.actions, ...fileActions],
    changes:
      files.some((file) => file.item.state !== 'current') ||
      (input.derived ?? []).some((item) => item.state !== 'current' && item.state !== 'error'),
  };
}

export interface InstallSelection {
  /** Install only these node paths (`--file`); default every file of the domain. */
  readonly files?: readonly string[];
  /** Overwrite diverged and modified files, recreate deleted ones (`--force`). */
  readonly force?: boolean;
}

export interface PlannedInstall {
  readonly domain: string;
  readonly files: readonly {
    readonly fileId: string;
    readonly path: string;
    readonly expectedSha256: string | null;
    readonly content: string;
    readonly markers?: BlockMarkers;
    readonly mode?: string;
    readonly action?: string;
    readonly template?: false;
    /** `base64`: `content` is the bytes of a source that is not UTF-8 text (§10.4). */
    readonly encoding?: 'base64';
  }[];
}

/** States never written without --force, worst first (the refusal's code is the worst's). */
const REFUSED = ['diverged', 'modified', 'deleted'] as const satisfies readonly DriftState[];
const REFUSAL_CODE = { diverged: 'DIVERGED', modified: 'MODIFIED', deleted: 'DELETED' } as const;

function why(file: FilePlan): string {
  switch (file.item.state) {
    case 'diverged':
      return `${file.path} has ${file.item.localLines ?? 0} local line${file.item.localLines === 1 ? '' : 's'} (diverged)`;
    case 'modified':
      // A mode changed by hand on a file whose lines are fleet's (contract §10.4).
      if (file.item.mode !== undefined && file.item.deletedLines === undefined) {
        const { live, wanted, written } = file.item.mode;
        const against =
          written === undefined ? `the repository says ${wanted}` : `fleet wrote ${written}`;
        return `${file.path} has its mode changed by hand (${live}; ${against})`;
      }
      return `${file.path} is modified by hand (every line known, the whole not)`;
    default:
      return `${file.path} was installed by fleet and removed since (deleted)`;
  }
}

/**
 * The refusal of a hand change, naming the ways out (contract §8.4, §8.5): keep the host's version
 * (`adopt`, and `adopt --promote` to make it the canonical — the host is then current), or
 * overwrite it (`--force`; for a deleted file, the only way: it recreates it).
 */
function handChangeRefusal(
  plan: DomainPlan,
  refused: readonly FilePlan[],
  derived: readonly DriftReportItem[] = [],
): FleetError {
  const states = [...refused.map((file) => file.item.state), ...derived.map((i) => i.state)];
  const worst = REFUSED.find((state) => states.includes(state));
  const suggestions: string[] = [];
  for (const item of derived) {
    suggestions.push(
      `fleet config install ${plan.host} ${plan.domain} --confirm --force   (overwrite the hand change in ${item.path ?? 'the derived layer'})`,
    );
  }
  for (const file of refused) {
    if (file.item.state !== 'deleted') {
      suggestions.push(
        `fleet config adopt ${plan.host} ${file.path}   (keep it in mirror/ for review)`,
        `fleet config adopt ${plan.host} ${file.path} --promote   (make it the canonical: the host is then current)`,
      );
    }
    suggestions.push(
      `fleet config install ${plan.host} ${plan.domain} --file ${file.path} --confirm --force   (${file.item.state === 'deleted' ? 'recreate it' : 'overwrite it'})`,
    );
  }
  return new FleetError(
    REFUSAL_CODE[worst ?? 'diverged'],
    `refused: ${[
      ...refused.map(why),
      ...derived.map(
        (item) => `${item.path ?? plan.domain} (derived) ${item.detail ?? item.state}`,
      ),
    ].join('; ')}; nothing was sent (review the plan, then adopt, adopt --promote, or --force)`,
    { suggestions },
  );
}

/**
 * The top-level code of a file that cannot be installed: what happened, as the node or the render
 * said it (contract §7) — `DOMAIN_NOT_SERVED`, `POLICY_REFUSED`, `SYMLINK_REFUSED`,
 * `HARDLINK_REFUSED`, `RENDER_FAILED` (exit 2), … — and `FORMAT_UNSUPPORTED` only when nothing
 * more precise is known.
 */
export function blockingCode(file: Pick<FilePlan, 'code'>): ErrorCode {
  const { code } = file;
  return code !== undefined && Object.hasOwn(ERROR_CODES, code)
    ? (code as ErrorCode)
    : 'FORMAT_UNSUPPORTED';
}

/** Why no install of these files can be sent (an `error` or `unsupported` file), or undefined. */
function installBlocker(plan: DomainPlan, chosen: readonly FilePlan[]): FleetError | undefined {
  const problems: Problem[] = [];
  const blocked: FilePlan[] = [];
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
    } else continue;
    blocked.push(file);
  }
  const first = blocked[0];
  if (first === undefined) return undefined;
  return new FleetError(
    blockingCode(first),
    `install of ${plan.domain} on ${plan.host} refused: ${problems[0]?.file}: ${problems[0]?.message}`,
    { problems },
  );
}

/** Codes saying the node will not serve the domain (or the path) at all: its policy decides. */
const NOT_SERVED: ReadonlySet<string> = new Set([
  'DOMAIN_NOT_SERVED',
  'POLICY_REFUSED',
  'PATH_OUTSIDE_ROOT',
  'NODE_POLICY_MISSING',
  'NODE_POLICY_INVALID',
  'NODE_POLICY_INSECURE',
]);

/**
 * `fleet config plan`'s verdict (contract §7): a plan against a node that cannot serve the domain
 * — or refuses one of its paths by policy — is not "an install would change this host" but the
 * node's refusal, with its code and exit 7. Other files an install would refuse (`unsupported`,
 * a render error, a hand change) are the plan's to show; undefined when nothing is refused so.
 */
export function planRefusal(plans: readonly DomainPlan[]): FleetError | undefined {
  for (const plan of plans) {
    const refused = plan.files.filter(
      (file) => file.code !== undefined && NOT_SERVED.has(file.code),
    );
    const first = refused[0];
    if (first === undefined) continue;
    return new FleetError(
      blockingCode(first),
      `${plan.host} cannot install ${plan.domain}: ${first.item.detail ?? first.code ?? ''}`,
      {
        problems: refused.map((file) => ({ file: file.path, message: file.item.detail ?? '' })),
      },
    );
  }
  return undefined;
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
  const blocker = installBlocker(plan, chosen);
  if (blocker !== undefined) throw blocker;
  const refused = chosen.filter((file) => (REFUSED as readonly string[]).includes(file.item.state));
  // A hand change in a derived layer (the router's volume) is refused like one in a file: the
  // install writes it whatever file is selected.
  const derived = (plan.derived ?? []).filter((item) =>
    (REFUSED as readonly string[]).includes(item.state),
  );
  if ((refused.length > 0 || derived.length > 0) && !selection.force) {
    throw handChangeRefusal(plan, refused, derived);
  }
  return {
    domain: plan.domain,
    files: chosen.map((file) => ({
      fileId: file.fileId,
      path: file.path,
      expectedSha256: file.liveSha256,
      content: file.desired as string,
      ...(file.markers ? { markers: file.markers } : {}),
      ...(file.mode === undefined ? {} : { mode: file.mode }),
      ...(file.action === undefined ? {} : { action: file.action }),
      ...(file.template === false ? { template: false as const } : {}),
      ...(file.encoding === undefined ? {} : { encoding: file.encoding }),
    })),
  };
}

/**
 * The coupled actions an install of the domain runs: its coupling's, then each role fleet.yaml
 * gives a node policy action (`domains.<d>.validate|reload|restart`) that the coupling does not
 * already list (the router's `reload`).
 */
function plannedActions(repo: FleetRepo, declaration: DomainDeclaration): CoupledAction[] {
  const declared = declaration.coupling.kind === 'process' ? declaration.coupling.actions : [];
  const roles = Object.entries(installActions(repo, declaration))
    .filter(([role]) => !declared.some((action) => action.kind === role))
    .map(([role, id]) => ({
      kind: role,
      description:
        role === VALIDATE_ROLE
          ? `node policy action ${id}, on each changed file's new content before it replaces the old`
          : `node policy action ${id}, after the files are written`,
    }));
  return [...declared, ...roles];
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
  // With the domains' probers, the derived layer is read in the same request (contract §14).
  const probers = (assessment.probes?.probers ?? []).filter((p) => p.domain !== undefined);
  const { files: assessed, items: derived } =
    assessment.probes !== undefined && probers.length > 0
      ? await assessFilesAndProbes(assessment, host, probers, assessment.probes.readSnapshot)
      : { files: await assessHost(assessment, host), items: [] };
  const names =
    domain === undefined ? entry.domains.filter((name) => assessment.domains.has(name)) : [domain];
  return names.map((name) => {
    const declaration = (assessment.domains.get(name) as DomainRuntime).declaration;
    return buildDomainPlan({
      host,
      domain: name,
      repoCommit: assessment.snapshot.commit,
      ...(assessment.uncommitted ? { uncommitted: assessment.uncommitted } : {}),
      actions: plannedActions(assessment.repo, declaration),
      ...(declaration.repoManifest === undefined ? {} : { repoDeclared: true }),
      assessed: assessed.filter((file) => file.target.domain === name),
      derived: derived.filter((item) => item.domain === name && item.layer === 'derived'),
    });
  });
}
