/**
 * The node's allowlist (contract §5, §5.1): the paths of the domains this node serves — every
 * managed file's and derived path's declared `path` under the home, plus the per-host overrides
 * the node policy lists for them (`domains.<d>.paths.<id>`, exact paths or patterns), the paths
 * of a domain whose files are declared in the repository (the files domain, contract §10.4) where
 * the policy's `domains.<d>.patterns` match them — never a path another domain declares — and the
 * backups the controller itself made of them. Nothing else:
 * - fleet's own state (`~/.local/state/fleet/`, the env files, the policy, …) never, whatever a
 *   declaration or the policy says (`PATH_OUTSIDE_ROOT`);
 * - a domain the node does not serve: `DOMAIN_NOT_SERVED`, saying how to serve it;
 * - a path a served domain's request names that is neither declared nor listed: `POLICY_REFUSED`;
 * - any other path: `PATH_OUTSIDE_ROOT`.
 *
 * Built from the registry and one version of the node policy; the policy store builds a new one
 * when the policy changes (policy/store.ts). A closed allowlist (the policy became unreadable)
 * serves nothing and answers every domain with the policy's problem.
 */
import {
  FleetError,
  NODE_POLICY_PATH,
  foldPath,
  fleetOwnReason,
  isFleetOwnPath,
  isHomePath,
  matchHomePattern,
  parseHomePath,
  parseHomePattern,
  policyPatternText,
  type FileFormat,
  type HomePattern,
  type NodePolicy,
  type PolicyAction,
  type Registry,
  compareCodeUnits,
} from '@fleet/core/node';
import { isBackupOf, parseBackupName } from './backups.js';
import { STATE_DIR } from './state-paths.js';

export interface AllowedPath {
  readonly domain: string;
  readonly fileId: string;
  readonly path: string;
  readonly kind: 'file' | 'derived';
  readonly format: FileFormat;
  /** How many backups of this file the node keeps. */
  readonly backups: number;
  /** Whether the domain's installer owns process actions (`coupling: process`). */
  readonly processCoupled: boolean;
  /** True for a per-host path the node policy lists (not the declared default). */
  readonly override?: true;
}

export interface AllowedBackup extends Omit<AllowedPath, 'kind'> {
  readonly kind: 'backup';
  /** The managed path the backup is a copy of. */
  readonly of: string;
}

interface Override {
  readonly entry: Omit<AllowedPath, 'path'>;
  readonly patterns: readonly HomePattern[];
}

export const DEFAULT_BACKUPS = 10;
/** Admissions an allowlist remembers at most (see `Allowlist.admitted`). */
const ADMITTED_ENTRIES = 1024;
const BACKUP_PREFIX = `~/${STATE_DIR}/backups/`;

/**
 * `DOMAIN_NOT_SERVED`, saying how to start serving the domain (in the message: only code and
 * message cross the wire).
 */
function notServed(domain: string, why: string, fix: string): FleetError {
  return new FleetError(
    'DOMAIN_NOT_SERVED',
    `this node does not serve domain ${domain}: ${why}; ${fix}`,
  );
}

export class Allowlist {
  private readonly byPath = new Map<string, AllowedPath>();
  /**
   * Every registered domain's declared paths, served or not (to name the domain in a refusal, and
   * never to hand one to another domain), by folded path (core `foldPath`): on APFS and NTFS
   * `~/.config/Fleet/transport.yaml` is the transport-identity domain's file.
   */
  private readonly declared = new Map<string, string>();
  private readonly overrides = new Map<string, Override[]>();
  /** Per served domain whose files the repository declares: the policy's patterns for them. */
  private readonly repoDeclared = new Map<
    string,
    Omit<AllowedPath, 'path' | 'fileId'> & {
      readonly patterns: readonly HomePattern[];
    }
  >();
  private readonly registered = new Map<string, { implemented: boolean }>();
  private readonly servedDomains = new Set<string>();
  /**
   * What {@link Allowlist.require} admitted for a domain, by domain and path (contract §14: every
   * snapshot asks again for the same paths, a files-domain path matched against the policy's
   * patterns each time). Safe: an allowlist is one registry and one node policy version, never
   * changed (the policy store builds a new one when the policy file changes), so the answer for a
   * (domain, path) is always the same; only admissions are kept, at most {@link ADMITTED_ENTRIES}.
   */
  private readonly admitted = new Map<string, AllowedPath>();

  constructor(
    registry: Pick<Registry, 'domains'>,
    private readonly policy: NodePolicy,
    /** Set when the policy is unusable: nothing is served and every domain answers this. */
    private readonly closedBy?: FleetError,
  ) {
    for (const { descriptor } of registry.domains()) {
      this.registered.set(descriptor.domain, { implemented: descriptor.load !== undefined });
      const served = closedBy === undefined && Object.hasOwn(policy.domains, descriptor.domain);
      if (served) this.servedDomains.add(descriptor.domain);
      const common = {
        domain: descriptor.domain,
        backups: descriptor.backups ?? DEFAULT_BACKUPS,
        processCoupled: descriptor.coupling.kind === 'process',
      };
      const entries: AllowedPath[] = [
        ...descriptor.files.map((file) => ({
          ...common,
          fileId: file.id,
          path: file.path,
          kind: 'file' as const,
          format: file.format,
        })),
        ...(descriptor.derivedPaths ?? []).map((derived) => ({
          ...common,
          fileId: derived.id,
          path: derived.path,
          kind: 'derived' as const,
          format: derived.format,
        })),
      ];
      const section = policy.domains[descriptor.domain];
      const overrides: Override[] = [];
      for (const entry of entries) {
        const key = foldPath(entry.path);
        if (!this.declared.has(key)) this.declared.set(key, entry.domain);
        // The registry already refuses two plugins claiming one path; first claimant wins here too.
        if (served && !this.byPath.has(entry.path)) this.byPath.set(entry.path, entry);
        const patterns = section?.paths?.[entry.fileId];
        if (served && patterns) {
          const { path: _default, ...rest } = entry;
          overrides.push({
            entry: { ...rest, override: true },
            patterns: patterns.map((p) => parseHomePattern(policyPatternText(p))),
          });
        }
      }
      if (overrides.length > 0) this.overrides.set(descriptor.domain, overrides);
      if (served && descriptor.repoManifest !== undefined) {
        this.repoDeclared.set(descriptor.domain, {
          ...common,
          kind: 'file',
          format: 'text',
          patterns: (section?.patterns ?? []).map((p) => parseHomePattern(policyPatternText(p))),
        });
      }
    }
  }

  /** The domains this node serves (registered and listed in its policy), sorted. */
  served(): string[] {
    return [...this.servedDomains].sort();
  }

  /** Throws `DOMAIN_NOT_SERVED` (or the policy's own problem) unless the node serves `domain`. */
  requireServed(domain: string): void {
    if (this.closedBy) throw this.closedBy;
    if (this.servedDomains.has(domain)) return;
    const registered = this.registered.get(domain);
    if (!registered) {
      throw notServed(
        domain,
        'no plugin on this node provides it',
        'install the plugin in the node runtime (fleet upgrade), then list the domain in its node policy',
      );
    }
    throw notServed(
      domain,
      `its node policy (${NODE_POLICY_PATH}) does not list it`,
      `to serve it, add "${domain}: {}" under domains: in that file on the node (docs/node-policy.md)`,
    );
  }

  /** The policy's coupled actions of a served domain, by id. */
  actionsOf(domain: string): Readonly<Record<string, PolicyAction>> {
    this.requireServed(domain);
    return this.policy.domains[domain]?.actions ?? {};
  }

  /** Whether the policy allows unattended installs of `domain` (never for a process coupling). */
  unattendedAllowed(domain: string, processCoupled: boolean): boolean {
    return !processCoupled && this.policy.domains[domain]?.unattended === 'allow';
  }

  /** The `~/` directories a managed file may be a symbolic link into (node policy `symlinkInto`). */
  get symlinkDirs(): readonly string[] {
    return this.closedBy ? [] : this.policy.symlinkInto;
  }

  /** The declared paths of every served domain, sorted. */
  all(): AllowedPath[] {
    return [...this.byPath.values()].sort(
      (a, b) => compareCodeUnits(a.domain, b.domain) || compareCodeUnits(a.path, b.path),
    );
  }

  forDomain(domain: string): AllowedPath[] {
    return this.all().filter((entry) => entry.domain === domain);
  }

  /**
   * The entry of a `~/` path, for `domain` when given: `PATH_INVALID` for a bad path,
   * `PATH_OUTSIDE_ROOT` for fleet's own state or a path no served domain has,
   * `DOMAIN_NOT_SERVED` for a domain the node does not serve, `POLICY_REFUSED` for a path the
   * policy does not accept for `domain`.
   */
  require(path: string, domain?: string): AllowedPath {
    if (domain !== undefined) {
      const known = this.admitted.get(`${domain}\u0000${path}`);
      if (known !== undefined) return known;
    }
    parseHomePath(path);
    if (isFleetOwnPath(path)) throw new FleetError('PATH_OUTSIDE_ROOT', fleetOwnReason(path));
    if (domain !== undefined) {
      this.requireServed(domain);
      const entry = this.byPath.get(path);
      if (entry && entry.domain === domain) return this.admit(domain, path, entry);
      const override = this.overrideOf(path, domain);
      if (override) return this.admit(domain, path, override);
      const declared = this.repoDeclaredOf(path, domain);
      if (declared) return this.admit(domain, path, declared);
      if (this.repoDeclared.has(domain)) {
        const owner = this.ownerOf(path);
        throw new FleetError(
          'POLICY_REFUSED',
          owner !== undefined && owner !== domain
            ? `${JSON.stringify(path)} is a path of domain ${owner}, never one of domain ${domain}`
            : `${JSON.stringify(path)} is not a path this node accepts for domain ${domain}: no pattern of domains.${domain}.patterns in ${NODE_POLICY_PATH} matches it`,
        );
      }
      throw new FleetError(
        'POLICY_REFUSED',
        `${JSON.stringify(path)} is not a path this node accepts for domain ${domain}: neither one it declares nor one its node policy lists (domains.${domain}.paths.<file id> in ${NODE_POLICY_PATH})`,
      );
    }
    const entry = this.byPath.get(path);
    if (entry) return entry;
    const owner = this.ownerOf(path);
    if (owner !== undefined) this.requireServed(owner);
    const matches = [
      ...[...this.overrides.keys()].map((d) => this.overrideOf(path, d)),
      ...[...this.repoDeclared.keys()].map((d) => this.repoDeclaredOf(path, d)),
    ].filter((e): e is AllowedPath => e !== undefined);
    if (matches.length === 1) return matches[0] as AllowedPath;
    if (matches.length > 1) {
      throw new FleetError(
        'POLICY_REFUSED',
        `${JSON.stringify(path)} matches path overrides of ${matches.map((m) => m.domain).join(' and ')} in the node policy: name one domain`,
      );
    }
    if (this.closedBy) throw this.closedBy;
    throw new FleetError(
      'PATH_OUTSIDE_ROOT',
      `${JSON.stringify(path)} is not on this node's allowlist`,
      { suggestions: ['only the paths of the domains this node serves can be read or written'] },
    );
  }

  private admit(domain: string, path: string, entry: AllowedPath): AllowedPath {
    if (this.admitted.size < ADMITTED_ENTRIES) this.admitted.set(`${domain}\u0000${path}`, entry);
    return entry;
  }

  /**
   * The repository-declared files (the files domain's, contract §10.4) among `paths`: the node
   * knows no manifest, only the paths fleet wrote (its record, `written.ts`), so those are the
   * ones it can list and whose backups it can name — each still one its policy accepts today.
   */
  repoDeclaredAmong(paths: Iterable<string>): AllowedPath[] {
    const out: AllowedPath[] = [];
    for (const path of paths) {
      if (this.byPath.has(path) || !isHomePath(path) || isFleetOwnPath(path)) continue;
      for (const domain of this.repoDeclared.keys()) {
        const entry = this.repoDeclaredOf(path, domain);
        if (entry !== undefined) {
          out.push(entry);
          break;
        }
      }
    }
    return out.sort(
      (a, b) => compareCodeUnits(a.domain, b.domain) || compareCodeUnits(a.path, b.path),
    );
  }

  /**
   * A managed path or one of the controller's backups of one (readable, never writable). `known`:
   * the paths of the node's record, so a backup of a repository-declared file is named too.
   */
  requireReadable(path: string, known: Iterable<string> = []): AllowedPath | AllowedBackup {
    parseHomePath(path);
    if (path.startsWith(BACKUP_PREFIX)) {
      const [domain, name, ...rest] = path.slice(BACKUP_PREFIX.length).split('/');
      const parsed = name === undefined || rest.length > 0 ? undefined : parseBackupName(name);
      const of =
        parsed &&
        [...this.all(), ...this.repoDeclaredAmong(known)].find(
          (e) => e.domain === domain && isBackupOf(parsed.fileId, e.fileId),
        );
      if (of) return { ...of, kind: 'backup', of: of.path, path };
    }
    return this.require(path);
  }

  /**
   * The entry of a repository-declared file of `domain` at `path` (its file id is its path), when
   * the policy's patterns for the domain match it and no other domain declares it (contract
   * §10.4: a path another domain owns is never the files domain's, whatever a pattern says).
   */
  private repoDeclaredOf(path: string, domain: string): AllowedPath | undefined {
    const entry = this.repoDeclared.get(domain);
    if (entry === undefined) return undefined;
    const owner = this.ownerOf(path);
    if (owner !== undefined && owner !== domain) return undefined;
    if (!entry.patterns.some((pattern) => matchHomePattern(pattern, path))) return undefined;
    const { patterns: _patterns, ...rest } = entry;
    return { ...rest, fileId: path, path };
  }

  /** The domain that declares `path` (compared folded), if any. */
  private ownerOf(path: string): string | undefined {
    return this.declared.get(foldPath(path));
  }

  /**
   * The override entry `path` is for in `domain` (first file id in declaration order); never a
   * path another domain declares, whatever a pattern says.
   */
  private overrideOf(path: string, domain: string): AllowedPath | undefined {
    const owner = this.ownerOf(path);
    if (owner !== undefined && owner !== domain) return undefined;
    for (const { entry, patterns } of this.overrides.get(domain) ?? []) {
      if (patterns.some((pattern) => matchHomePattern(pattern, path))) return { ...entry, path };
    }
    return undefined;
  }
}
