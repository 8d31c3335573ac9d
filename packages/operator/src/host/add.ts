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
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from '@fleet/core/zod';
import * as core from '@fleet/core';
import { acceptRuntime } from '@fleet/controller';
import type { BootstrapPlan, FleetManifest, HostEntry, Registry } from '@fleet/core';
import { authorizedKeysLine } from '../bootstrap/authorized-keys.js';
import { loadFleetContext } from '../config/context.js';
import { canonicalArtifact, type LoadedArtifact } from '../runtime/artifact.js';
import {
  DEFAULT_CONTROLLER_PORT,
  DEFAULT_DOMAINS,
  OPERATOR_TOKEN_DAYS,
  OPERATOR_TOKEN_SCOPES,
  controllerUrl,
  enrollmentPolicy,
  hostEntryFor,
  enrollmentCodeBearing,
  renderEnrollment,
  type EnrollmentInput,
} from './enrollment.js';
import { nodePlatformOf } from '../release/node-binary.js';
import { plannedPlatformOf } from './platform.js';
import { commitHostFiles, ensureCredentialsFile, ensureRecoveryKey } from './fleet-files.js';
import {
  ARTIFACT_CACHE,
  ENROLL_CACHE,
  POLICY_FILE,
  enrollmentProblems,
  hostNodeUsable,
  parseProbe,
  probeScript,
  type HostFacts,
} from './probe.js';
import {
  openSshSession,
  parseHostKeyPin,
  parseSshAddress,
  shellQuote,
  type SshSession,
} from './ssh-session.js';

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

const enrollAnswerSchema = z.object({
  schema: z.literal('fleet.enroll-result/v1'),
  nodeId: z.string(),
  policy: z.enum(['written', 'unchanged', 'replaced']),
  tls: z.object({ fingerprint: z.string() }).nullable(),
  token: z.object({ id: z.string(), token: z.string().min(1) }),
  transaction: z.string(),
  runner: z.object({ pid: z.number(), log: z.string(), via: z.string() }),
});

export async function addHost(options: AddHostOptions): Promise<AddHostResult> {
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
  const artifact = await pinnedArtifact(options.root, manifest);
  const existingUrl = existing ? new URL(existing.controller) : null;
  const address = options.address ?? existingUrl?.hostname.replace(/^\[(.*)\]$/, '$1') ?? ssh.host;
  const port =
    options.port ?? (existingUrl?.port ? Number(existingUrl.port) : DEFAULT_CONTROLLER_PORT);
  const pinText = options.hostKey ?? existing?.ssh?.hostKey;
  const session = await openSshSession({
    address: ssh,
    name,
    pin: pinText === undefined ? undefined : parseHostKeyPin(pinText),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
  });
  try {
    const url = controllerUrl(address, port);
    const listen = core.controllerListen(url);
    const facts = parseProbe((await session.run(probeScript(listen.bind, listen.port))).stdout);
    const input: EnrollmentInput = {
      name,
      host: plannedPlatformOf(facts.os),
      ssh,
      hostKey: session.hostKey.line,
      address,
      port,
      domains,
      filesPaths,
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
    const base = {
      host: name,
      controller: url,
      hostKey: session.hostKey.line,
      runtime: { version: artifact.identity.version, sha256: artifact.identity.sha256 },
      problems,
      codeBearing,
      text,
    };
    if (!options.confirm) {
      return { ...base, outcome: 'planned', fingerprint: null, bytesSent: 0, commit: null };
    }
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
    const node =
      nodeChoice === 'release' && shipped !== null
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
        held,
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

/**
 * On an enrolled host whose policy is not the one planned (a path added to files.yaml, a domain
 * added): the planned policy written over SSH — the earlier one kept as a `.bak` beside it,
 * written to a temp file (0600) and renamed. The controller reads it at its next request.
 */
async function updatePolicy(
  session: SshSession,
  facts: HostFacts,
  input: EnrollmentInput,
  options: AddHostOptions,
): Promise<boolean> {
  const text = core.formatNodePolicy(enrollmentPolicy(input));
  if (facts.policySha256 === createHash('sha256').update(text).digest('hex')) return false;
  const file = `${facts.home}/${POLICY_FILE}`;
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  options.progress(
    `${input.name}: updating its node policy (the earlier one kept as ${file}.${stamp}.bak)…`,
  );
  await must(
    session,
    `umask 077 && mkdir -p ${shellQuote(dirname(file))} && { [ ! -f ${shellQuote(file)} ] || cp -p ${shellQuote(file)} ${shellQuote(`${file}.${stamp}.bak`)}; } && cat > ${shellQuote(`${file}.fleet-new`)} && mv -f ${shellQuote(`${file}.fleet-new`)} ${shellQuote(file)}`,
    text,
  );
  return true;
}

interface ShippedNodeOnSeat {
  readonly platform: string;
  readonly version: string;
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * The Node.js the pinned release ships for the host's platform, if any. Its file must be in this
 * seat's store (a clone without it: `fleet release --confirm --node PLATFORM` again).
 */
function shippedNodeFor(
  root: string,
  manifest: FleetManifest,
  sha256: string,
  facts: HostFacts,
): ShippedNodeOnSeat | null {
  const platform = nodePlatformOf(facts.os, facts.arch);
  const pin = manifest.artifacts
    .find((entry) => entry.sha256 === sha256)
    ?.node?.find((node) => node.platform === platform);
  if (pin === undefined) return null;
  let bytes: number;
  try {
    bytes = statSync(join(root, pin.file)).size;
  } catch {
    throw new core.FleetError(
      'USAGE',
      `the release's Node.js for ${pin.platform} (${pin.file}) is not in this seat's store: fleet release --confirm --node ${pin.platform} puts it back; nothing was sent`,
    );
  }
  return { ...pin, bytes };
}

/** Which Node.js will run fleet on the host (pure). */
export function chooseNode(
  wanted: 'auto' | 'host' | 'release',
  facts: HostFacts,
  shipped: { readonly platform: string } | null,
): 'host' | 'release' {
  if (wanted === 'host') return 'host';
  if (wanted === 'release') return 'release';
  return hostNodeUsable(facts) || shipped === null ? 'host' : 'release';
}

/**
 * Puts the release's Node.js on the host: the `node-<platform>` tarball to
 * `~/.cache/fleet/artifacts/<sha256>.tgz` (unless there, checked by its sha256 on the host), its
 * `package/bin/node` unpacked to `~/.local/share/fleet/node/<version>-<platform>/` (unless
 * there), and run once; returns its path.
 */
async function installShippedNode(
  session: SshSession,
  facts: HostFacts,
  shipped: ShippedNodeOnSeat,
  upload: boolean,
  options: AddHostOptions,
  name: string,
): Promise<string> {
  const cached = `${facts.home}/${ARTIFACT_CACHE}/${shipped.sha256}.tgz`;
  const nodeDir = plannedPlatformOf(facts.os).nodeDir;
  const dir = `${facts.home}/${nodeDir}/${shipped.version}-${shipped.platform}`;
  if (upload) {
    const local = join(options.root, shipped.file);
    options.progress(`${name}: sending Node.js ${shipped.version} for ${shipped.platform}…`);
    const part = `${cached}.${randomBytes(4).toString('hex')}.part`;
    await must(
      session,
      `mkdir -p ${shellQuote(dirname(cached))} && chmod 700 ${shellQuote(dirname(cached))}`,
    );
    await session.put(local, part);
    await must(session, `mv -f ${shellQuote(part)} ${shellQuote(cached)}`);
  }
  const node = `${dir}/package/bin/node`;
  const temp = `${dir}.${randomBytes(4).toString('hex')}.tmp`;
  const version = await must(
    session,
    [
      `if [ ! -x ${shellQuote(node)} ]; then`,
      `  [ "$({ sha256sum 2>/dev/null || shasum -a 256; } < ${shellQuote(cached)} | cut -d' ' -f1)" = ${shipped.sha256} ] || { echo "the Node.js tarball is not the one pinned" >&2; exit 1; }`,
      `  mkdir -p ${shellQuote(temp)} && tar -xzf ${shellQuote(cached)} -C ${shellQuote(temp)} package/bin/node && rm -rf ${shellQuote(dir)} && mv ${shellQuote(temp)} ${shellQuote(dir)}`,
      'fi',
      `${shellQuote(node)} --version`,
    ].join('\n'),
  );
  options.progress(`${name}: Node.js ${version.trim()} at ${node}`);
  return node;
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

/**
 * The certificate fingerprint when the host already runs this fleet's canonical runtime as
 * `name` and the credentials file's token opens it over TLS; `null` otherwise.
 */
async function answersAsEnrolled(
  name: string,
  url: string,
  facts: HostFacts,
  artifact: LoadedArtifact,
  options: AddHostOptions,
): Promise<string | null> {
  if (facts.certificate === null || !facts.controllerActive) return null;
  const credentialsPath = core.defaultCredentialsPath(process.env);
  if (!existsSync(credentialsPath)) return null;
  const credentials = await core.loadCredentials(credentialsPath);
  const token = credentials.hosts[name]?.token;
  if (token === undefined) return null;
  const fingerprint = core.certificateFingerprint(facts.certificate);
  const client = core.createControllerClient({
    host: name,
    url,
    token,
    tlsFingerprint: fingerprint,
    timeoutMs: 10_000,
  });
  try {
    const identity = await client.identity();
    return identity.nodeId === name &&
      identity.build.sha256 === artifact.identity.sha256 &&
      identity.health.status === 'ok' &&
      domainsServed(identity.catalog.domains, options.domains ?? [])
      ? fingerprint
      : null;
  } catch {
    return null;
  } finally {
    client.close();
  }
}

function domainsServed(
  catalog: readonly { name?: string; domain?: string }[],
  wanted: readonly string[],
): boolean {
  const served = new Set(catalog.map((entry) => entry.domain ?? entry.name));
  return wanted.every((domain) => served.has(domain));
}

async function enroll(
  session: SshSession,
  manifest: FleetManifest,
  input: EnrollmentInput,
  facts: HostFacts,
  artifact: LoadedArtifact,
  options: AddHostOptions,
  where: { held: boolean; upload: boolean },
): Promise<{ fingerprint: string }> {
  const sha = artifact.identity.sha256;
  const home = facts.home;
  const cached = `${home}/${ARTIFACT_CACHE}/${sha}.tgz`;
  const generation = `${home}/${input.host.runtimeDir}/generations/${sha}`;
  const unpacked = `${home}/${ENROLL_CACHE}/${sha}`;
  if (where.upload) {
    options.progress(
      `${input.name}: sending the runtime ${artifact.identity.version} (${artifact.identity.bytes} bytes)…`,
    );
    const part = `${cached}.${randomBytes(4).toString('hex')}.part`;
    await must(
      session,
      `mkdir -p ${shellQuote(dirname(cached))} && chmod 700 ${shellQuote(dirname(cached))}`,
    );
    const local = join(options.root, artifact.identity.file);
    await session.put(existsSync(local) ? local : artifact.identity.file, part);
    await must(session, `mv -f ${shellQuote(part)} ${shellQuote(cached)}`);
  }
  const artifactFile = where.held ? `${generation}/artifact.tgz` : cached;
  let cli = `${generation}/package/bin/run.js`;
  if (!where.held) {
    options.progress(`${input.name}: unpacking the runtime…`);
    const temp = `${unpacked}.${randomBytes(4).toString('hex')}.tmp`;
    await must(
      session,
      `if [ ! -f ${shellQuote(`${unpacked}/package/bin/run.js`)} ]; then mkdir -p ${shellQuote(temp)} && tar -xzf ${shellQuote(cached)} -C ${shellQuote(temp)} && rm -rf ${shellQuote(unpacked)} && mv ${shellQuote(temp)} ${shellQuote(unpacked)}; fi`,
    );
    cli = `${unpacked}/package/bin/run.js`;
  }
  const node = facts.node as string;
  const recovery = await ensureRecoveryKey();
  // The entry as planned: its certificate does not exist yet (the stage makes it), so its pin is
  // a placeholder here; the plan reads only its domains, supervisor and controller URL.
  const entry = hostEntryFor(input, `sha256:${Array(32).fill('00').join(':')}`);
  const plan = await enrollmentPlan(options, manifest, input, entry, artifact);
  const artifactSignature = manifest.artifacts.find(
    (entry) => entry.sha256 === artifact.identity.sha256,
  )?.signature;
  const request = {
    schema: 'fleet.enroll/v1',
    plan,
    policy: core.formatNodePolicy(enrollmentPolicy(input)),
    token: {
      client: `operator-${input.name}`,
      scopes: [...OPERATOR_TOKEN_SCOPES],
      ttlDays: OPERATOR_TOKEN_DAYS,
    },
    authorizedKey: authorizedKeysLine({
      publicKey: recovery.publicKey,
      command: [
        node,
        `${home}/${input.host.runtimeDir}/current/package/bin/run.js`,
        'bootstrap',
        'receive',
        '--home',
        home,
      ],
    }),
    ...(options.acceptanceTimeoutMs === undefined
      ? {}
      : { acceptanceTimeoutMs: options.acceptanceTimeoutMs }),
    ...(artifactSignature === undefined ? {} : { signature: artifactSignature }),
  };
  const credentialsPath = await ensureCredentialsFile();
  const update = await core.prepareCredentialsUpdate(credentialsPath);
  let answer: z.infer<typeof enrollAnswerSchema>;
  try {
    options.progress(
      `${input.name}: enrolling the node (policy, TLS key, token, first generation)…`,
    );
    const ran = await session.run(
      `cd && ${shellQuote(node)} ${shellQuote(cli)} controller enroll --home ${shellQuote(home)} --artifact ${shellQuote(artifactFile)}`,
      { stdin: JSON.stringify(request) },
    );
    if (ran.code !== 0) throw nodeFailure(input.name, ran.code, ran.stderr);
    const parsed = enrollAnswerSchema.safeParse(
      JSON.parse(ran.stdout.trim().split('\n').pop() ?? 'null'),
    );
    if (!parsed.success || parsed.data.tls === null) {
      throw new core.FleetError(
        'RESPONSE_INVALID',
        `${input.name}'s enrollment answered something that is not its answer`,
      );
    }
    answer = parsed.data;
    await update.commit((current) => ({
      ...current,
      hosts: {
        ...current.hosts,
        [input.name]: { token: answer.token.token, ssh: { identityFile: recovery.privateKeyFile } },
      },
    }));
  } catch (error) {
    await update.abort();
    throw error;
  }
  const fingerprint = (answer.tls as { fingerprint: string }).fingerprint;
  await acceptFromSeat(session, input, plan, answer, fingerprint, options);
  return { fingerprint };
}

async function enrollmentPlan(
  options: AddHostOptions,
  manifest: FleetManifest,
  input: EnrollmentInput,
  entry: HostEntry,
  artifact: LoadedArtifact,
): Promise<BootstrapPlan> {
  const repoCommit = await core
    .createGit(options.root)
    .run(['rev-parse', 'HEAD'])
    .then((out) => out.stdout.trim())
    .catch(() => null);
  return core.sealPlan({
    schema: core.BOOTSTRAP_PLAN_SCHEMA,
    host: input.name,
    nodeId: input.name,
    platform: input.host.platform,
    supervisor: input.host.supervisor,
    route: 'ssh',
    artifact: {
      file: artifact.identity.file,
      sha256: artifact.identity.sha256,
      bytes: artifact.identity.bytes,
      package: artifact.identity.package,
      version: artifact.identity.version,
      commit: artifact.identity.commit,
    },
    prior: { build: null, observedThrough: 'ssh' },
    repoCommit,
    protocol: core.FLEET_PROTOCOL_VERSION,
    target: core.targetExpectation({
      nodeId: input.name,
      host: entry,
      artifact: artifact.identity,
      plugins: manifest.plugins,
    }),
    listen: core.plannedListen({ controller: entry.controller }),
  });
}

/** Polls the new controller over TLS at its declared URL until the plan's target accepts. */
async function acceptFromSeat(
  session: SshSession,
  input: EnrollmentInput,
  plan: BootstrapPlan,
  answer: z.infer<typeof enrollAnswerSchema>,
  fingerprint: string,
  options: AddHostOptions,
): Promise<void> {
  const url = controllerUrl(input.address, input.port);
  options.progress(
    `${input.name}: waiting for ${url} to answer as ${input.name} (transaction ${answer.transaction})…`,
  );
  const client = core.createControllerClient({
    host: input.name,
    url,
    token: answer.token.token,
    tlsFingerprint: fingerprint,
    timeoutMs: 5_000,
  });
  const deadline = Date.now() + (options.acceptanceTimeoutMs ?? 60_000) + 30_000;
  let last = 'no answer yet';
  try {
    while (Date.now() < deadline) {
      try {
        const identity = await client.identity();
        const verdict = acceptRuntime(plan.target, identity);
        if (verdict.accepted) {
          options.progress(`${input.name}: accepted over TLS at ${url}`);
          return;
        }
        last = verdict.failures
          .map((failure) => `${failure.criterion}: ${failure.actual}, expected ${failure.expected}`)
          .join('; ');
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await sleep(1_000);
    }
  } finally {
    client.close();
  }
  const log = await session
    .run(`tail -n 20 ${shellQuote(answer.runner.log)} 2>/dev/null`)
    .catch(() => null);
  throw new core.FleetError(
    'ACCEPTANCE_FAILED',
    `${input.name} did not answer as enrolled at ${url} (${last}); the runner's last lines:\n${log?.stdout.trim() || '(no runner log)'}`,
  );
}

async function must(session: SshSession, command: string, stdin?: string): Promise<string> {
  const ran = await session.run(command, stdin === undefined ? {} : { stdin });
  if (ran.code !== 0) {
    throw new core.FleetError(
      'ACTION_FAILED',
      `on the host, ${command} failed (exit ${ran.code}): ${ran.stderr.trim().split('\n').pop() ?? ''}`,
    );
  }
  return ran.stdout;
}

/** The node's error as the CLI printed it, its code kept when it names one. */
function nodeFailure(name: string, exitCode: number, stderr: string): Error {
  const text = stderr.trim();
  const code = /\b([A-Z][A-Z_]{3,})\b/.exec(text)?.[1];
  const message = `${name}: enrollment failed on the node (exit ${exitCode}): ${text.split('\n').slice(0, 5).join(' ') || 'no message'}`;
  return code !== undefined && Object.hasOwn(core.ERROR_CODES, code)
    ? new core.FleetError(code as core.ErrorCode, message)
    : new core.FleetError('ACTION_FAILED', message);
}
