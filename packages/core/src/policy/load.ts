/**
 * Reading the node policy (docs/node-policy.md): `~/.config/fleet/node-policy.yaml`, checked like
 * the operator's credentials file — on the open descriptor (`fstat`), so a file swapped after the
 * check is never read: a regular file (never a symbolic link), mode 0600 or narrower, owned by the
 * user reading it. YAML through `parseYaml` (duplicate keys refused, lines kept), then the strict
 * schema; every problem names the file, its line and the field.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { FleetError, type Problem } from '../errors.js';
import type { DomainDeclaration } from '../interfaces/domain.js';
import { parseYaml, yamlLibrary } from '../yaml.js';
import { fieldPath, zodProblems } from '../zod-problems.js';
import { matchHomePattern, policyPatternText } from './pattern.js';
import {
  NODE_POLICY_PATH,
  NODE_POLICY_VERSION,
  nodePolicySchema,
  type NodePolicy,
  type NodePolicyInput,
} from './schema.js';

/** A policy file is small; anything larger is refused unread. */
export const MAX_NODE_POLICY_BYTES = 256 * 1024;

/** What identifies one version of the file on disk: a change of any field means "read again". */
export interface NodePolicyStamp {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

export interface LoadedNodePolicy {
  /** The absolute file it was read from. */
  readonly file: string;
  readonly policy: NodePolicy;
  /** sha256 of the file's bytes (a bootstrap plan may record it as observed). */
  readonly sha256: string;
  readonly stamp: NodePolicyStamp;
  /** The 1-based line of a field, for problems found later (against the registry). */
  readonly lineOf: (path: readonly PropertyKey[]) => number | undefined;
}

/** The policy file of the node whose home is `home`. */
export function nodePolicyFile(home: string): string {
  return join(home, ...NODE_POLICY_PATH.slice(2).split('/'));
}

/** The fix for a node without a (valid) policy, spelled for its home. */
export function nodePolicyFix(home: string): string {
  return `on the node: fleet node-policy init --home ${home} (see docs/node-policy.md)`;
}

/** Parses a policy's text (pure): `NODE_POLICY_INVALID` with one problem per error. */
export function parseNodePolicy(
  text: string,
  file: string,
): { readonly policy: NodePolicy; readonly lineOf: LoadedNodePolicy['lineOf'] } {
  const parsed = parseYaml(text, file, 'NODE_POLICY_INVALID');
  const result = nodePolicySchema.safeParse(parsed.value ?? {});
  if (!result.success) {
    throw new FleetError('NODE_POLICY_INVALID', `${file} is not a valid node policy`, {
      problems: zodProblems(result.error, file, parsed.lineOf),
    });
  }
  return { policy: result.data, lineOf: parsed.lineOf };
}

export interface ReadNodePolicyOptions {
  readonly platform?: NodeJS.Platform;
  /** The user the file must belong to (default: this process's). */
  readonly uid?: number;
}

/**
 * Reads and validates the policy file `file`. `NODE_POLICY_MISSING` when there is none,
 * `NODE_POLICY_INSECURE` for a group/world-accessible file or another owner, `NODE_POLICY_INVALID`
 * for anything else wrong (a symbolic link, not a regular file, too large, YAML, schema).
 */
export async function readNodePolicyFile(
  file: string,
  home: string,
  options: ReadNodePolicyOptions = {},
): Promise<LoadedNodePolicy> {
  const platform = options.platform ?? process.platform;
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new FleetError(
        'NODE_POLICY_MISSING',
        `this node has no policy (${file}): it serves nothing and runs nothing until one is written`,
        { suggestions: [nodePolicyFix(home)] },
      );
    }
    throw new FleetError(
      'NODE_POLICY_INVALID',
      code === 'ELOOP'
        ? `${file} is a symbolic link: the node policy must be a regular file`
        : `cannot read the node policy ${file}: ${code ?? String(error)}`,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new FleetError('NODE_POLICY_INVALID', `${file} is not a regular file`);
    }
    if (platform !== 'win32') {
      if ((stats.mode & 0o077) !== 0) {
        const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
        throw new FleetError(
          'NODE_POLICY_INSECURE',
          `${file} has mode ${mode}: the node policy must not be accessible to group or others (chmod 600 ${file})`,
        );
      }
      const uid = options.uid ?? process.getuid?.();
      if (uid !== undefined && stats.uid !== uid) {
        throw new FleetError(
          'NODE_POLICY_INSECURE',
          `${file} is owned by uid ${stats.uid}, not by the user reading it (uid ${uid})`,
        );
      }
    }
    if (stats.size > MAX_NODE_POLICY_BYTES) {
      throw new FleetError(
        'NODE_POLICY_INVALID',
        `${file} is ${stats.size} bytes, over the ${MAX_NODE_POLICY_BYTES}-byte bound of a node policy`,
      );
    }
    const bytes = await handle.readFile();
    const { policy, lineOf } = parseNodePolicy(bytes.toString('utf8'), file);
    return {
      file,
      policy,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      stamp: {
        dev: stats.dev,
        ino: stats.ino,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        ctimeMs: stats.ctimeMs,
      },
      lineOf,
    };
  } finally {
    await handle.close();
  }
}

export interface CheckNodePolicyOptions {
  /**
   * A domain no given declaration provides: a problem (`problem`, the default — the controller,
   * whose plugins are the node's), or left to the caller (`skip`: the operator checking a node's
   * policy, whose plugins need not be the node's; see {@link unknownPolicyDomains}).
   */
  readonly unknownDomains?: 'problem' | 'skip';
}

/** The domains a policy serves that none of `declarations` provides, in the policy's order. */
export function unknownPolicyDomains(
  policy: NodePolicy,
  declarations: readonly DomainDeclaration[],
): string[] {
  const known = new Set(declarations.map((d) => d.domain));
  return Object.keys(policy.domains).filter((domain) => !known.has(domain));
}

/**
 * Checks a valid policy against the domains this node has (pure): every served domain is provided
 * by a loaded plugin, every path override names one of its file or derived-path ids, no override
 * can reach another domain's declared path, and no process-coupled domain allows unattended
 * installs. Empty when the policy fits.
 */
export function checkNodePolicy(
  policy: NodePolicy,
  declarations: readonly DomainDeclaration[],
  file?: string,
  lineOf?: LoadedNodePolicy['lineOf'],
  options: CheckNodePolicyOptions = {},
): Problem[] {
  const problems: Problem[] = [];
  const at = (path: readonly (string | number)[], message: string): void => {
    const line = lineOf?.(path);
    problems.push({
      ...(file === undefined ? {} : { file }),
      ...(line === undefined ? {} : { line }),
      path: fieldPath(path),
      message,
    });
  };
  const byDomain = new Map(declarations.map((d) => [d.domain, d]));
  for (const [domain, section] of Object.entries(policy.domains)) {
    const declaration = byDomain.get(domain);
    if (!declaration) {
      if (options.unknownDomains !== 'skip')
        at(['domains', domain], `no loaded plugin provides domain ${domain}`);
      continue;
    }
    if (section.unattended === 'allow' && declaration.coupling.kind === 'process') {
      at(
        ['domains', domain, 'unattended'],
        `${domain} is process-coupled: its unattended installs are always refused (contract §10.3)`,
      );
    }
    const ids = new Set([
      ...declaration.files.map((f) => f.id),
      ...(declaration.derivedPaths ?? []).map((d) => d.id),
    ]);
    for (const [id, patterns] of Object.entries(section.paths ?? {})) {
      if (!ids.has(id)) {
        at(
          ['domains', domain, 'paths', id],
          `${domain} has no file or derived path ${id} (it has: ${[...ids].join(', ')})`,
        );
        continue;
      }
      patterns.forEach((entry, index) => {
        const pattern = policyPatternText(entry);
        for (const other of declarations) {
          if (other.domain === domain) continue;
          const owned = [...other.files, ...(other.derivedPaths ?? [])].find((f) =>
            matchHomePattern(pattern, f.path),
          );
          if (owned) {
            at(
              ['domains', domain, 'paths', id, index],
              `${pattern} reaches ${owned.path}, a path of domain ${other.domain}`,
            );
          }
        }
      });
    }
  }
  return problems;
}

/** A policy serving `domains` at their declared defaults: no actions, unattended denied. */
export function defaultNodePolicy(
  domains: readonly string[],
  options: {
    readonly tools?: readonly string[];
    readonly bootstrap?: NodePolicyInput['bootstrap'];
    readonly supervisor?: NodePolicyInput['supervisor'];
  } = {},
): NodePolicyInput {
  return {
    version: NODE_POLICY_VERSION,
    domains: Object.fromEntries([...domains].sort().map((domain) => [domain, {}])),
    versions: { tools: [...(options.tools ?? [])] },
    symlinkInto: [],
    bootstrap: options.bootstrap ?? { allow: false },
    ...(options.supervisor ? { supervisor: options.supervisor } : {}),
  };
}

/** The policy as the YAML a node keeps (a commented header, then the fields). */
export function formatNodePolicy(policy: NodePolicyInput): string {
  // Validated first: a writer never produces a file its reader would refuse.
  nodePolicySchema.parse(policy);
  return [
    '# fleet node policy (docs/node-policy.md): what this node serves, runs and writes.',
    '# Written on this node only (fleet node-policy init, fleet lab up, or by hand); no config',
    '# verb, wire route or bootstrap bundle ever writes it. Keep it mode 0600.',
    yamlLibrary().stringify(policy, { lineWidth: 0 }),
  ].join('\n');
}
