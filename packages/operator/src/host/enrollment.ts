/**
 * The enrollment of one host, planned (pure; contract §12.1): its fleet.yaml entry, the node policy
 * it will get, the operator's token to issue, and the text `fleet host add` prints before it is
 * confirmed. No I/O here: `add.ts` gathers the inputs and carries the plan out.
 */
import {
  codeBearingGrants,
  describeCodeBearing,
  formatNodePolicy,
  nodePolicySchema,
  type CodeBearingGrant,
  type DomainDeclaration,
  type HostEntry,
  type NodePolicyInput,
  type Scope,
} from '@fleet/core';
import type { HostPlatform } from './platform.js';
import type { HostFacts } from './probe.js';
import type { SshAddress } from './ssh-session.js';

/**
 * The scopes of the token `host add` issues to the operator: every verb of the operator seat —
 * drift/status/apply/adopt/version/upgrade/bootstrap. Not `node-admin:tokens`: token
 * administration of the host goes over SSH (`fleet token … --home` on it), so a stolen seat
 * token cannot mint itself successors (contract §5 "Scopes").
 */
export const OPERATOR_TOKEN_SCOPES: readonly Scope[] = [
  'config:read',
  'config:install',
  'config:adopt',
  'versions:read',
  'runtime:upgrade',
  'node-admin:bootstrap',
];
/** How long the operator's token lives; `fleet token rotate --host` renews it. */
export const OPERATOR_TOKEN_DAYS = 365;
export const DEFAULT_CONTROLLER_PORT = 7701;
export const DEFAULT_DOMAINS = ['files'] as const;

export interface EnrollmentInput {
  readonly name: string;
  /** What the host's `uname -s` chose: platform, supervisor, layout (platform.ts). */
  readonly host: HostPlatform;
  readonly ssh: SshAddress;
  /** The SSH host key line the session saw (pinned in fleet.yaml). */
  readonly hostKey: string;
  /** `--address`, else fleet.yaml's, else the SSH host. */
  readonly address: string;
  readonly port: number;
  readonly domains: readonly string[];
  /** The files domain's paths at HEAD (files.yaml), which the policy allows exactly. */
  readonly filesPaths: readonly string[];
  /** The tools `fleet version` may probe on this host (fleet.yaml `probes.tools`). */
  readonly tools: readonly string[];
  /** fleet.yaml's `signing.keys`: the release keys the node trusts (ADR 0019). */
  readonly trustedKeys: readonly string[];
}

/** The URL of a controller at `address`:`port` (an IPv6 address in brackets). */
export function controllerUrl(address: string, port: number): string {
  return `https://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** The host's fleet.yaml entry once its certificate's fingerprint is known. */
export function hostEntryFor(input: EnrollmentInput, fingerprint: string): HostEntry {
  return {
    controller: controllerUrl(input.address, input.port),
    tls: { fingerprint },
    platform: input.host.platform,
    supervisor: input.host.supervisor,
    upgrade: { strategy: 'tarball' },
    domains: [...input.domains],
    ssh: {
      host: input.ssh.host,
      port: input.ssh.port,
      user: input.ssh.user,
      hostKey: input.hostKey,
    },
    ...(input.tools.length > 0 ? { probes: { tools: [...input.tools] } } : {}),
  };
}

/**
 * The node policy: the host's domains at their defaults; for the files domain exactly the paths
 * files.yaml declares at HEAD (no globs, docs/node-policy.md); no actions, unattended denied;
 * bootstrap allowed through the host's supervisor only (upgrades and recovery: systemd-user on
 * Linux, launchd on a Mac); the supervisor named;
 * runtimes staged only when signed by one of fleet.yaml's `signing.keys` (ADR 0019).
 */
export function enrollmentPolicy(input: EnrollmentInput): NodePolicyInput {
  const domains: Record<string, { patterns?: string[] }> = {};
  for (const domain of [...input.domains].sort()) {
    domains[domain] = domain === 'files' ? { patterns: [...input.filesPaths].sort() } : {};
  }
  return {
    version: 1,
    domains,
    versions: { tools: [...input.tools] },
    symlinkInto: [],
    bootstrap: { allow: true, supervisors: [input.host.supervisor] },
    supervisor: input.host.policySupervisor,
    runtime: { trustedKeys: [...input.trustedKeys], allowUnsigned: false },
  };
}

/**
 * The paths the planned policy lets a `config:install` run code through as the host's user (core
 * code-bearing.ts: the files domain's paths from files.yaml, the domains' declared defaults), named
 * in the plan before it is confirmed (docs/node-policy.md, "Paths that run code").
 */
export function enrollmentCodeBearing(
  input: EnrollmentInput,
  declarations: readonly DomainDeclaration[],
): CodeBearingGrant[] {
  return codeBearingGrants(nodePolicySchema.parse(enrollmentPolicy(input)), declarations);
}

export interface EnrollmentView {
  readonly input: EnrollmentInput;
  readonly facts: HostFacts;
  readonly hostKeyFingerprint: string;
  readonly hostKeyPinned: boolean;
  readonly artifact: { readonly version: string; readonly sha256: string; readonly bytes: number };
  readonly upload: boolean;
  /** Which Node.js will run fleet there, in words. */
  readonly node: string;
  readonly problems: readonly string[];
  /** {@link enrollmentCodeBearing}: named under the policy. */
  readonly codeBearing: readonly CodeBearingGrant[];
}

/** What `fleet host add` without `--confirm` prints (pure). */
export function renderEnrollment(view: EnrollmentView): string {
  const { input, facts } = view;
  const lines = [
    `host add ${input.name}: ${input.ssh.user}@${input.ssh.host} port ${input.ssh.port}`,
    `  SSH host key   ${view.hostKeyFingerprint}${view.hostKeyPinned ? ' (matches the pin)' : " — compare it with the host's (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on it), then pass --host-key"}`,
    `  host           ${facts.os} ${facts.arch}, user ${facts.user} (uid ${facts.uid ?? '?'}), home ${facts.home}`,
    `  Node.js        ${view.node}`,
    `  runtime        ${view.artifact.version} (${view.artifact.sha256.slice(0, 12)}, ${view.artifact.bytes} bytes) ${view.upload ? 'to upload' : 'already on the host: not sent'}`,
    `  controller     ${controllerUrl(input.address, input.port)} ${input.host.supervision}, TLS key made on the host`,
    `  domains        ${input.domains.join(', ')}`,
    `  token          ${OPERATOR_TOKEN_SCOPES.join(', ')} for ${OPERATOR_TOKEN_DAYS} days, into your credentials file`,
    `  trusted keys   ${input.trustedKeys.length > 0 ? input.trustedKeys.map((key) => `${key.slice(0, 30)}…`).join(', ') : 'none (fleet.yaml has no signing.keys: fleet release --confirm adds yours)'}`,
    '  node policy    ~/.config/fleet/node-policy.yaml:',
    ...formatNodePolicy(enrollmentPolicy(input))
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => `    ${line}`),
    ...describeCodeBearing(view.codeBearing).map((line) => `  ${line}`),
  ];
  if (view.problems.length > 0) {
    lines.push('cannot enroll yet:', ...view.problems.map((problem) => `  - ${problem}`));
  } else {
    lines.push(
      `run again with --confirm${view.hostKeyPinned ? '' : ' --host-key <the fingerprint above>'} to enroll it`,
    );
  }
  return `${lines.join('\n')}\n`;
}
