/**
 * `fleet host add NAME --ssh USER@HOST[:PORT]` (contract §12.1, docs/getting-started.md): one
 * command from a machine with sshd and a user account to a host of the fleet, over TLS at the
 * address fleet.yaml names.
 *
 * Without `confirm` it only looks (the probe) and returns the plan. With it, in order:
 * 1. the SSH host key must be pinned (`--host-key`, or fleet.yaml's) — never trust on first use;
 * 2. a host that already answers over TLS as this host with the canonical runtime is enrolled:
 *    nothing is sent, and fleet.yaml is committed only if it lacks the host (an interrupted run);
 * 3. otherwise the artifact goes to `~/.cache/fleet/artifacts/<sha256>.tgz` unless the host holds
 *    it (content-addressed: never sent twice), is unpacked, and its own CLI enrolls the node
 *    (`controller enroll`, packages/controller/src/enroll/enroll.ts) with the plan, the node policy,
 *    the token to issue and the recovery key's forced-command line;
 * 4. the token it answers is stored in the credentials file (prepared before the node is asked);
 * 5. the host is accepted from this seat — identity, build, catalog and health over TLS at the
 *    declared address, the certificate pinned — and only then fleet.yaml and hosts/NAME.yaml are
 *    committed, naming the host, address, fingerprint and runtime.
 */
import * as core from '@fleet/core';
import type { FleetManifest, HostEntry, Registry } from '@fleet/core';
import { loadFleetContext } from '../config/context.js';
import { canonicalArtifact, type LoadedArtifact } from '../runtime/artifact.js';
import { nodePlatformOf } from '../release/node-binary.js';
import { answersAsEnrolled, updatePolicy } from './enrolled-host.js';
import { enroll } from './enroll-node.js';
import {
  DEFAULT_CONTROLLER_PORT,
  DEFAULT_DOMAINS,
  controllerUrl,
  enrollmentCodeBearing,
  hostEntryFor,
  renderEnrollment,
  type EnrollmentInput,
} from './enrollment.js';
import { commitHostFiles } from './fleet-files.js';
import { plannedPlatformOf } from './platform.js';
import { enrollmentProblems, parseProbe, probeScript, type HostFacts } from './probe.js';
import {
  chooseNode,
  installShippedNode,
  shippedNodeFor,
  type ShippedNodeOnSeat,
} from './shipped-node.js';
import {
  openSshSession,
  parseHostKeyPin,
  parseSshAddress,
  type SshSession,
} from './ssh-session.js';

export { chooseNode } from './shipped-node.js';

export interface AddHostOptions {
  readonly root: string;
  readonly registry: Registry;
  readonly name: string;
  /** `USER@HOST[:PORT]`; default: fleet.yaml's `ssh` of an enrolled host. */
  readonly ssh?: string;
  readonly address?: string;
  readonly port?: number;
  readonly hostKey?: string;
  readonly domains?: readonly string[];
  readonly identity?: string;
  readonly confirm: boolean;
  /**
   * Which Node.js runs fleet on the host: `host` its own, `release` the one the release ships for
   * its platform, `auto` (default) the host's when it is at least the floor, else the release's.
   */
  readonly node?: 'auto' | 'host' | 'release';
  readonly acceptanceTimeoutMs?: number;
  readonly progress: (line: string) => void;
}

export interface AddHostResult {
  readonly host: string;
  readonly outcome: 'planned' | 'enrolled' | 'unchanged' | 'recorded' | 'policy-updated';
  readonly controller: string;
  readonly hostKey: string;
  readonly fingerprint: string | null;
  readonly runtime: { readonly version: string; readonly sha256: string };
  /** Bytes of the artifact sent to the host (0 when it held them). */
  readonly bytesSent: number;
  readonly commit: string | null;
  readonly problems: readonly string[];
  /** The paths the host's policy lets a config:install run code through (docs/node-policy.md). */
  readonly codeBearing: readonly core.CodeBearingGrant[];
  /** The plan as printed without --confirm. */
  readonly text: string;
}

export async function addHost(options: AddHostOptions): Promise<AddHostResult> {
  const target = await resolveTarget(options);
  const { name, manifest, existing, ssh, pinText } = target;
  const artifact = await pinnedArtifact(options.root, manifest);
  const session = await openSshSession({
    address: ssh,
    name,
    pin: pinText === undefined ? undefined : parseHostKeyPin(pinText),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
  });
  try {
    const planned = await planEnrollment(session, target, artifact, options);
    const { facts, input, url } = planned;
    const base = {
      host: name,
      controller: url,
      hostKey: session.hostKey.line,
      runtime: { version: artifact.identity.version, sha256: artifact.identity.sha256 },
      problems: planned.problems,
      codeBearing: planned.codeBearing,
      text: planned.text,
    };
    if (!options.confirm) {
      return { ...base, outcome: 'planned', fingerprint: null, bytesSent: 0, commit: null };
    }
    refuseUnconfirmable(name, session, planned.problems);
    const enrolled = await answersAsEnrolled(name, url, facts, artifact, options);
    if (enrolled !== null) {
      const policyUpdated = await updatePolicy(session, facts, input, options);
      const entry = hostEntryFor(input, enrolled);
      const commit = await commitHostFiles(options.root, name, entry, artifact, existing);
      return {
        ...base,
        outcome: commit !== null ? 'recorded' : policyUpdated ? 'policy-updated' : 'unchanged',
        fingerprint: enrolled,
        bytesSent: 0,
        commit,
      };
    }
    const { shipped, nodeUpload, upload } = planned;
    const node =
      planned.nodeChoice === 'release' && shipped !== null
        ? await installShippedNode(session, facts, shipped, nodeUpload, options, name)
        : (facts.node as string);
    const enrolledNow = await enroll(
      session,
      manifest,
      input,
      { ...facts, node },
      artifact,
      options,
      {
        held: planned.held,
        upload,
      },
    );
    const entry = hostEntryFor(input, enrolledNow.fingerprint);
    const commit = await commitHostFiles(options.root, name, entry, artifact, existing);
    return {
      ...base,
      outcome: 'enrolled',
      fingerprint: enrolledNow.fingerprint,
      bytesSent: (upload ? artifact.identity.bytes : 0) + (nodeUpload ? (shipped?.bytes ?? 0) : 0),
      commit,
    };
  } finally {
    session.close();
  }
}

/** Where the host is and what it will run, from the options and fleet.yaml at HEAD. */
interface Target {
  readonly name: string;
  readonly manifest: FleetManifest;
  readonly existing: HostEntry | undefined;
  readonly ssh: { readonly user: string; readonly host: string; readonly port: number };
  readonly pinText: string | undefined;
  readonly domains: readonly string[];
  readonly filesPaths: readonly string[];
  readonly address: string;
  readonly port: number;
}

async function resolveTarget(options: AddHostOptions): Promise<Target> {
  const { name } = options;
  // fleet.yaml and files.yaml at HEAD, read once: the files domain's declared paths are what a
  // new node's policy allows (enrollment.ts).
  const filesDomain = options.registry
    .domains()
    .some((entry) => entry.descriptor.domain === 'files');
  const context = await loadFleetContext({
    root: options.root,
    registry: options.registry,
    domains: filesDomain ? ['files'] : [],
    needsCredentials: false,
  });
  context.close();
  const manifest = context.repo.manifest;
  const existing = manifest.hosts[name];
  if (options.ssh === undefined && existing?.ssh === undefined) {
    throw new core.FleetError(
      'USAGE',
      `--ssh USER@HOST[:PORT] is needed: fleet.yaml has no ssh for ${name}`,
    );
  }
  const ssh =
    options.ssh === undefined
      ? {
          user: existing?.ssh?.user as string,
          host: existing?.ssh?.host as string,
          port: existing?.ssh?.port ?? 22,
        }
      : parseSshAddress(options.ssh);
  const domains = options.domains ?? existing?.domains ?? [...DEFAULT_DOMAINS];
  for (const domain of domains) options.registry.domain(domain); // an unknown domain: USAGE
  const filesPaths = domains.includes('files')
    ? (context.domains.get('files')?.declaration.files ?? []).map((file) => file.path)
    : [];
  const existingUrl = existing ? new URL(existing.controller) : null;
  const address = options.address ?? existingUrl?.hostname.replace(/^\[(.*)\]$/, '$1') ?? ssh.host;
  const port =
    options.port ?? (existingUrl?.port ? Number(existingUrl.port) : DEFAULT_CONTROLLER_PORT);
  const pinText = options.hostKey ?? existing?.ssh?.hostKey;
  return { name, manifest, existing, ssh, pinText, domains, filesPaths, address, port };
}

/** What the probe found and what would be done: the plan printed without `confirm`. */
interface PlannedEnrollment {
  readonly url: string;
  readonly facts: HostFacts;
  readonly input: EnrollmentInput;
  /** The host holds the runtime as a generation already. */
  readonly held: boolean;
  /** The artifact is to be sent (neither held nor in the host's cache). */
  readonly upload: boolean;
  readonly shipped: ShippedNodeOnSeat | null;
  readonly nodeChoice: 'host' | 'release';
  readonly nodeUpload: boolean;
  readonly problems: readonly string[];
  readonly codeBearing: readonly core.CodeBearingGrant[];
  readonly text: string;
}

async function planEnrollment(
  session: SshSession,
  target: Target,
  artifact: LoadedArtifact,
  options: AddHostOptions,
): Promise<PlannedEnrollment> {
  const { manifest, existing, address, port } = target;
  const url = controllerUrl(address, port);
  const listen = core.controllerListen(url);
  const facts = parseProbe((await session.run(probeScript(listen.bind, listen.port))).stdout);
  const input: EnrollmentInput = {
    name: target.name,
    host: plannedPlatformOf(facts.os),
    ssh: target.ssh,
    hostKey: session.hostKey.line,
    address,
    port,
    domains: target.domains,
    filesPaths: target.filesPaths,
    tools: existing?.probes?.tools ?? [],
    trustedKeys: manifest.signing?.keys ?? [],
  };
  const held = facts.generations.includes(artifact.identity.sha256);
  const upload = !held && !facts.artifacts.includes(artifact.identity.sha256);
  const shipped = shippedNodeFor(options.root, manifest, artifact.identity.sha256, facts);
  const nodeChoice = chooseNode(options.node ?? 'auto', facts, shipped);
  const nodeUpload = nodeChoice === 'release' && !facts.artifacts.includes(shipped?.sha256 ?? '');
  const problems = [
    ...enrollmentProblems(facts, `${listen.bind}:${listen.port}`, nodeChoice),
    ...(options.node === 'release' && shipped === null
      ? [
          `--node release: the release ships no Node.js for this host (${facts.os} ${facts.arch}): fleet release --confirm --node ${nodePlatformOf(facts.os, facts.arch) ?? 'PLATFORM'}`,
        ]
      : []),
    ...signingProblems(manifest, artifact.identity.sha256),
  ];
  const codeBearing = enrollmentCodeBearing(
    input,
    options.registry.domains().map((entry) => entry.descriptor),
  );
  const text = renderEnrollment({
    input,
    codeBearing,
    facts,
    hostKeyFingerprint: session.hostKey.fingerprint,
    hostKeyPinned: session.pinned,
    artifact: {
      version: artifact.identity.version,
      sha256: artifact.identity.sha256,
      bytes: artifact.identity.bytes,
    },
    upload,
    node:
      nodeChoice === 'release' && shipped !== null
        ? `${shipped.version} for ${shipped.platform} from the release (${nodeUpload ? 'to upload' : 'already on the host'})`
        : `${facts.node ?? 'none'}${facts.nodeVersion === null ? '' : ` ${facts.nodeVersion}`} (the host's)`,
    problems,
  });
  return {
    url,
    facts,
    input,
    held,
    upload,
    shipped,
    nodeChoice,
    nodeUpload,
    problems,
    codeBearing,
    text,
  };
}

/** With `confirm`: an unpinned SSH host key or a problem of the plan stops before any change. */
function refuseUnconfirmable(name: string, session: SshSession, problems: readonly string[]): void {
  if (!session.pinned) {
    throw new core.FleetError(
      'HOSTKEY_UNKNOWN',
      `${name}'s SSH host key is ${session.hostKey.fingerprint}: compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on it), then run again with --host-key ${session.hostKey.fingerprint}; nothing was changed`,
    );
  }
  if (problems.length > 0) {
    throw new core.FleetError(
      'PRECONDITION_FAILED',
      `${name} cannot be enrolled yet: ${problems.join('; ')}; nothing was changed`,
    );
  }
}

/**
 * Why the pinned runtime cannot be installed on a node that trusts only signed releases (pure):
 * it is not signed, or fleet.yaml names no key to trust.
 */
export function signingProblems(manifest: FleetManifest, sha256: string): string[] {
  const pin = manifest.artifacts.find((entry) => entry.sha256 === sha256);
  const problems: string[] = [];
  if (pin?.signature === undefined) {
    problems.push(
      `the pinned runtime${pin === undefined ? '' : ` ${pin.version}`} is not signed, and a node stages only signed runtimes: fleet release --confirm signs it`,
    );
  }
  if ((manifest.signing?.keys ?? []).length === 0) {
    problems.push(
      'fleet.yaml names no release signing key (signing.keys): fleet release --confirm adds yours',
    );
  }
  return problems;
}

async function pinnedArtifact(root: string, manifest: FleetManifest): Promise<LoadedArtifact> {
  if (!manifest.artifacts.some((entry) => entry.version === manifest.canonicalVersion)) {
    throw new core.FleetError(
      'USAGE',
      `fleet.yaml pins no runtime artifact for canonicalVersion ${manifest.canonicalVersion}: host add installs the one pinned (make and pin one with fleet release --confirm); nothing was sent`,
    );
  }
  return canonicalArtifact(root, manifest);
}
