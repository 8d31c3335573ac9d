/**
 * `fleet config adopt --promote` (contract §8.5): the adopted capture, reverse-substituted, also
 * becomes the canonical file in `domains/`, in the same commit — the reverse arrow closes, and the
 * adopted host is `current` afterwards. It is refused when it would not be: the promoted canonical
 * must render back, for the adopted host, to exactly its live file (and pass the domain's
 * checks). And it is refused when it would put other hosts into drift: every other target whose
 * view the promotion changes is read (one request per host) and must then equal its live file,
 * unless the operator names the host with `--accept-drift-on` (a host that cannot be read counts
 * as drifting: nothing is assumed).
 *
 * Pure but for the reads, which are a parameter (`readLive`, the drift engine's transport).
 */
import { FleetError } from '../errors.js';
import { asFleetError, forEachHost } from '../client/for-each-host.js';
import type { Adopter } from '../interfaces/adopter.js';
import type { DomainDeclaration, ManagedFile } from '../interfaces/domain.js';
import type { CanonicalSnapshot } from '../classify/history.js';
import { canonicalPath } from '../render/views.js';
import { hostEntry, hostVariables, type FleetRepo } from '../repo/load.js';
import type { ReadLive } from './drift-inputs.js';
import type { LiveFile } from './file-items.js';
import type { DomainRuntime } from './domain-runtime.js';
import type { FileTarget } from './file-target.js';
import { targetsForHost } from './targets.js';

/** The canonical file's new text: the candidate, or (a block file) the adopter's splice of it. */
export function promotedCanonical(input: {
  readonly declaration: DomainDeclaration;
  readonly file: ManagedFile;
  /** The canonical as committed (`null`: absent at the commit). */
  readonly canonical: string | null;
  /** The reverse-substituted capture (`adoptCandidate`). */
  readonly candidate: string;
  readonly adopter?: Adopter | undefined;
}): string {
  if (input.file.kind === 'whole') return input.candidate;
  const path = canonicalPath(input.declaration, input.file);
  if (input.adopter?.promote === undefined) {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `domain ${input.declaration.domain} cannot promote a block of ${input.file.path} into ${path}: its adopter has no promote; adopt without --promote and edit ${path} by hand`,
    );
  }
  if (input.canonical === null) {
    throw new FleetError('CANONICAL_MISSING', `${path} is missing at the repo commit`);
  }
  return input.adopter.promote(input.file, input.canonical, input.candidate);
}

/** A target the promotion changes that would then differ from its live file (or cannot be read). */
export interface PromotionDrift {
  readonly host: string;
  readonly path: string;
  readonly why: string;
}

export interface PromotionCheck {
  /** The canonical file rewritten. */
  readonly canonical: string;
  /** Targets of other hosts (and other files of the adopted host) the promotion puts into drift. */
  readonly drift: readonly PromotionDrift[];
}

export interface PromotionInput {
  readonly repo: FleetRepo;
  readonly domains: ReadonlyMap<string, DomainRuntime>;
  /** The canonical files at the commit the repo was read at. */
  readonly snapshot: Pick<CanonicalSnapshot, 'atRef'>;
  readonly host: string;
  readonly declaration: DomainDeclaration;
  readonly file: ManagedFile;
  readonly newCanonical: string;
  /** The adopted host's live managed part (redacted capture, through the installer's `managed`). */
  readonly liveManaged: string | null;
  readonly readLive: ReadLive;
  readonly concurrency?: number;
}

type Snapshot = Pick<CanonicalSnapshot, 'atRef'>;

/** A target whose view the promotion changes, with its view after it (`null`: none renders). */
interface Changed {
  readonly target: FileTarget;
  readonly desired: string | null;
}

/** The targets of every host whose view of `canonical` the promotion changes. */
function changedTargets(
  input: PromotionInput,
  targetsOf: (host: string, snapshot: Snapshot) => FileTarget[],
  after: Snapshot,
  own: FileTarget,
): Map<string, Changed[]> {
  const changed = new Map<string, Changed[]>();
  for (const host of Object.keys(input.repo.manifest.hosts).sort()) {
    const before = new Map(targetsOf(host, input.snapshot).map((t) => [t.path, t]));
    for (const target of targetsOf(host, after)) {
      if (host === input.host && target.path === own.path) continue;
      const old = before.get(target.path);
      const desired = target.desired.ok ? target.desired.content : null;
      const was = old?.desired.ok ? old.desired.content : null;
      if (desired !== null && desired === was) continue;
      changed.set(host, [...(changed.get(host) ?? []), { target, desired }]);
    }
  }
  return changed;
}

/** Whether one changed target would then equal its live file (`[]`), or why not. */
function driftOf(
  input: PromotionInput,
  host: string,
  { target, desired }: Changed,
  file: LiveFile | undefined,
): PromotionDrift[] {
  const drift = (why: string): PromotionDrift[] => [{ host, path: target.path, why }];
  if (desired === null) {
    return drift(`would not render: ${target.desired.ok ? '' : target.desired.problem.message}`);
  }
  if (file === undefined || file.kind === 'refused') {
    return drift(`cannot be read (${file?.kind === 'refused' ? file.code : 'not reported'})`);
  }
  const runtime = input.domains.get(target.domain) as DomainRuntime;
  let managed: string | null;
  try {
    managed = file.kind === 'present' ? runtime.operator.managed(target.file, file.content) : null;
  } catch (error) {
    return drift(asFleetError(error).message);
  }
  if (managed === desired) return [];
  return drift(managed === null ? 'would be missing' : 'would differ from its live file');
}

/**
 * Checks a promotion: `PROMOTE_REFUSED` when the adopted host would not be current after it;
 * otherwise the targets it would put into drift (the caller refuses unless they are accepted).
 */
export async function checkPromotion(input: PromotionInput): Promise<PromotionCheck> {
  const canonical = canonicalPath(input.declaration, input.file);
  const after = { atRef: new Map(input.snapshot.atRef).set(canonical, input.newCanonical) };
  const affected = [...input.domains.values()].filter((runtime) =>
    runtime.declaration.files.some((f) => canonicalPath(runtime.declaration, f) === canonical),
  );
  const targetsOf = (host: string, snapshot: Snapshot): FileTarget[] => {
    const runs = hostEntry(input.repo, host).domains;
    const domains = affected.filter((runtime) => runs.includes(runtime.declaration.domain));
    return targetsForHost(host, hostVariables(input.repo, host), domains, snapshot).filter(
      (target) => target.canonical === canonical,
    );
  };

  const own = targetsOf(input.host, after).find(
    (target) => target.domain === input.declaration.domain && target.file.id === input.file.id,
  );
  if (!own?.desired.ok) {
    const problem = own && !own.desired.ok ? own.desired.problem.message : 'no target';
    throw new FleetError(
      'PROMOTE_REFUSED',
      `refused: the promoted ${canonical} would not be installable on ${input.host}: ${problem}`,
    );
  }
  if (own.desired.content !== input.liveManaged) {
    throw new FleetError(
      'PROMOTE_REFUSED',
      `refused: the promoted ${canonical} would not render back to ${input.host}:${input.file.path} (it holds text a template would change, such as a literal {{ host.NAME }}); adopt without --promote and edit ${canonical} by hand`,
    );
  }

  const changed = changedTargets(input, targetsOf, after, own);
  const outcomes = await forEachHost(
    [...changed.keys()],
    async (host) => {
      const targets = changed.get(host) ?? [];
      const live = await input.readLive(
        host,
        targets.map((t) => t.target),
      );
      return targets.flatMap((t) => driftOf(input, host, t, live.get(t.target.path)));
    },
    input.concurrency === undefined ? {} : { concurrency: input.concurrency },
  );
  const drift = outcomes.flatMap((outcome) =>
    outcome.ok
      ? outcome.value
      : (changed.get(outcome.host) ?? []).map(({ target }) => ({
          host: outcome.host,
          path: target.path,
          why: `cannot be read (${outcome.error.code})`,
        })),
  );
  return { canonical, drift };
}

/** The refusal for drift the operator did not accept, or `null` when every host is accepted. */
export function promotionRefusal(
  check: PromotionCheck,
  accepted: readonly string[],
): FleetError | null {
  const refused = check.drift.filter((d) => !accepted.includes(d.host));
  if (refused.length === 0) return null;
  const hosts = [...new Set(refused.map((d) => d.host))];
  return new FleetError(
    'PROMOTE_REFUSED',
    `refused: promoting ${check.canonical} would put ${hosts.length} other host${hosts.length === 1 ? '' : 's'} into drift: ${refused
      .map((d) => `${d.host}:${d.path} ${d.why}`)
      .join('; ')}; nothing was written`,
    {
      suggestions: [
        `${hosts.map((h) => `--accept-drift-on ${h}`).join(' ')}   (promote anyway; install those hosts next)`,
        'adopt without --promote (the capture goes to mirror/ for review)',
      ],
    },
  );
}
