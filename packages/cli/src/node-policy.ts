/**
 * What `fleet node-policy init|show` and `fleet validate --node-policy` share (docs/node-policy.md):
 * the node's home flag, reading and checking a policy file against this CLI's plugins (the same
 * reader and check the controller runs at start), and its one-screen summary.
 */
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import {
  FleetError,
  checkNodePolicy,
  codeBearingGrants,
  describeCodeBearing,
  readNodePolicyFile,
  unknownPolicyDomains,
  type CodeBearingGrant,
  type LoadedNodePolicy,
  type NodePolicy,
  type PolicyPattern,
  type Problem,
  type Registry,
} from '@fleet/core';
import { Flags } from '@fleet/core/command';

export const policyHomeFlag = Flags.directory({
  description: "the node's home whose policy to use (default: your home directory)",
  exists: true,
});

/** The home a node-local command works on: `--home`, else the user's home, as a real path. */
export async function nodeHome(flag: string | undefined): Promise<string> {
  return realpath(flag ?? homedir());
}

/** A policy read and checked, with the paths it lets a `config:install` run code through. */
export interface CheckedPolicy extends LoadedNodePolicy {
  /**
   * Each allowed path whose install runs code as the node's user (core code-bearing.ts), and the
   * lines that name them: shown wherever a policy is (docs/node-policy.md, "Paths that run code").
   */
  readonly codeBearing: { readonly grants: CodeBearingGrant[]; readonly lines: string[] };
}

/**
 * Reads `file` as the controller would (mode, owner, YAML, schema) and checks it against the
 * registry's domains; throws `NODE_POLICY_INVALID` with every problem. Never writes (no migration).
 * A domain no plugin of this CLI provides is not a problem here — the node's runtime may carry a
 * plugin the operator has not linked (contract §10.5) — but is returned in `unknownDomains`, for a
 * warning; the controller, whose plugins are the node's, refuses it.
 */
export async function checkedPolicy(
  file: string,
  home: string,
  registry: Registry,
): Promise<CheckedPolicy & { readonly unknownDomains: readonly string[] }> {
  const loaded = await readNodePolicyFile(file, home);
  const declarations = registry.domains().map((entry) => entry.descriptor);
  const problems: Problem[] = checkNodePolicy(
    loaded.policy,
    declarations,
    loaded.file,
    loaded.lineOf,
    { unknownDomains: 'skip' },
  );
  if (problems.length > 0) {
    throw new FleetError('NODE_POLICY_INVALID', `${file} does not fit this fleet's plugins`, {
      problems,
    });
  }
  const grants = codeBearingGrants(loaded.policy, declarations);
  return {
    ...loaded,
    unknownDomains: unknownPolicyDomains(loaded.policy, declarations),
    codeBearing: { grants, lines: describeCodeBearing(grants) },
  };
}

/** The warning line for a domain the policy serves that no plugin of this CLI provides. */
export function unknownDomainWarning(file: string, domain: string): string {
  return `${file}: domains.${domain}: no plugin this CLI loads provides domain ${domain}; its paths and actions are not checked here, and the node serves it only if its runtime carries the plugin (fleet plugins link it here to check it)`;
}

/** A pattern entry as the summary shows it: a broad one says so. */
function patternShown(entry: PolicyPattern): string {
  return typeof entry === 'string' ? entry : `${entry.pattern} (broad)`;
}

/**
 * The policy in a few lines: what the node serves, runs and writes. `fingerprintOf` names each
 * trusted release key as errors name it (`SHA256:…`, core `parseSshEd25519PublicKey`).
 */
export function summarise(
  policy: NodePolicy,
  fingerprintOf: (key: string) => string = (key) => key.split(/\s+/).slice(0, 2).join(' '),
): string[] {
  const lines: string[] = [];
  const domains = Object.entries(policy.domains).sort(([a], [b]) => a.localeCompare(b));
  lines.push(`serves: ${domains.map(([d]) => d).join(', ') || 'no domain'}`);
  for (const [domain, section] of domains) {
    for (const [id, patterns] of Object.entries(section.paths ?? {})) {
      lines.push(`  ${domain} ${id} may also be at: ${patterns.map(patternShown).join(', ')}`);
    }
    if (section.patterns) {
      lines.push(`  ${domain} paths: ${section.patterns.map(patternShown).join(', ')}`);
    }
    for (const [id, action] of Object.entries(section.actions ?? {})) {
      lines.push(
        `  ${domain} action ${id}: ${action.argv.join(' ')} (${action.timeoutSeconds} s, output ${action.output === 'return' ? `returned, at most ${action.outputBytes ?? 1024} bytes` : 'discarded'})`,
      );
    }
    if (section.unattended === 'allow') lines.push(`  ${domain} unattended installs: allowed`);
  }
  lines.push(`versions may run: ${policy.versions.tools.join(', ') || 'no tool'}`);
  if (policy.versions.path) lines.push(`  on PATH ${policy.versions.path.join(':')}`);
  if (policy.symlinkInto.length > 0) {
    lines.push(`managed files may link into: ${policy.symlinkInto.join(', ')}`);
  }
  lines.push(
    `bootstrap: ${policy.bootstrap.allow ? `allowed${policy.bootstrap.supervisors ? ` (${policy.bootstrap.supervisors.join(', ') || 'no supervisor'})` : ''}` : 'denied'}`,
  );
  // ADR 0019: whose release signatures a runtime change needs.
  const keys = policy.runtime?.trustedKeys ?? [];
  const unsigned = policy.runtime?.allowUnsigned === true;
  lines.push(
    `release signatures: ${keys.length === 0 ? 'no trusted key' : `${keys.length} trusted key(s)`}${
      unsigned
        ? '; unsigned runtimes allowed'
        : keys.length === 0
          ? ' (runtime changes refused)'
          : ''
    }`,
  );
  for (const key of keys) {
    const comment = key.trim().split(/\s+/).slice(2).join(' ');
    lines.push(`  ${fingerprintOf(key)}${comment === '' ? '' : ` ${comment}`}`);
  }
  if (policy.supervisor) {
    const { kind, ...rest } = policy.supervisor;
    lines.push(
      `supervisor: ${kind}${Object.keys(rest).length > 0 ? ` ${Object.values(rest).join(' ')}` : ''}`,
    );
  }
  return lines;
}
