/**
 * Steps 3–5 of `fleet host add` (add.ts, contract §12.1): the pinned runtime placed on the host,
 * the node enrolled by that runtime's own CLI (`controller enroll`,
 * packages/controller/src/enroll/enroll.ts), the token it answers stored, and the new controller
 * accepted from this seat over TLS at its declared address.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from '@fleet/core/zod';
import * as core from '@fleet/core';
import { acceptRuntime } from '@fleet/controller';
import type { BootstrapPlan, FleetManifest, HostEntry } from '@fleet/core';
import { authorizedKeysLine } from '../bootstrap/authorized-keys.js';
import { planArtifactFields, type LoadedArtifact } from '../runtime/artifact.js';
import {
  OPERATOR_TOKEN_DAYS,
  OPERATOR_TOKEN_SCOPES,
  controllerUrl,
  enrollmentPolicy,
  hostEntryFor,
  type EnrollmentInput,
} from './enrollment.js';
import { ensureCredentialsFile, ensureRecoveryKey } from './fleet-files.js';
import { ARTIFACT_CACHE, ENROLL_CACHE, type HostFacts } from './probe.js';
import { must, type SeatOptions } from './remote.js';
import { shellQuote, type SshSession } from './ssh-session.js';

/** The node's answer to `controller enroll` (packages/controller/src/enroll/enroll.ts). */
const enrollAnswerSchema = z.object({
  schema: z.literal('fleet.enroll-result/v1'),
  nodeId: z.string(),
  policy: z.enum(['written', 'unchanged', 'replaced']),
  tls: z.object({ fingerprint: z.string() }).nullable(),
  token: z.object({ id: z.string(), token: z.string().min(1) }),
  transaction: z.string(),
  runner: z.object({ pid: z.number(), log: z.string(), via: z.string() }),
});

type EnrollAnswer = z.infer<typeof enrollAnswerSchema>;

/** What the host learns the recovery key by (fleet-files.ts). */
type RecoveryKey = Awaited<ReturnType<typeof ensureRecoveryKey>>;

/**
 * Enrolls the node with the pinned runtime (steps 3–5 of add.ts): the artifact placed on the
 * host, `controller enroll` run by its own CLI, the token stored, the controller accepted over
 * TLS from this seat. Returns the certificate fingerprint the node made.
 */
export async function enroll(
  session: SshSession,
  manifest: FleetManifest,
  input: EnrollmentInput,
  facts: HostFacts,
  artifact: LoadedArtifact,
  options: SeatOptions,
  where: { held: boolean; upload: boolean },
): Promise<{ fingerprint: string }> {
  const placed = await placeRuntime(session, input, facts.home, artifact, options, where);
  const recovery = await ensureRecoveryKey();
  // The entry as planned: its certificate does not exist yet (the stage makes it), so its pin is
  // a placeholder here; the plan reads only its domains, supervisor and controller URL.
  const entry = hostEntryFor(input, `sha256:${Array(32).fill('00').join(':')}`);
  const plan = await enrollmentPlan(options, manifest, input, entry, artifact);
  const request = enrollRequest(manifest, input, facts, artifact, options, { plan, recovery });
  const answer = await runEnroll(session, input, facts, placed, request, recovery, options);
  const fingerprint = (answer.tls as { fingerprint: string }).fingerprint;
  await acceptFromSeat(session, input, plan, answer, fingerprint, options);
  return { fingerprint };
}

/**
 * The artifact on the host (sent to its cache unless there) and the CLI that enrolls: the held
 * generation's own, else the artifact unpacked to the enrollment cache (unless it is there).
 */
async function placeRuntime(
  session: SshSession,
  input: EnrollmentInput,
  home: string,
  artifact: LoadedArtifact,
  options: SeatOptions,
  where: { held: boolean; upload: boolean },
): Promise<{ readonly artifactFile: string; readonly cli: string }> {
  const sha = artifact.identity.sha256;
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
  if (where.held) {
    return { artifactFile: `${generation}/artifact.tgz`, cli: `${generation}/package/bin/run.js` };
  }
  options.progress(`${input.name}: unpacking the runtime…`);
  const temp = `${unpacked}.${randomBytes(4).toString('hex')}.tmp`;
  await must(
    session,
    `if [ ! -f ${shellQuote(`${unpacked}/package/bin/run.js`)} ]; then mkdir -p ${shellQuote(temp)} && tar -xzf ${shellQuote(cached)} -C ${shellQuote(temp)} && rm -rf ${shellQuote(unpacked)} && mv ${shellQuote(temp)} ${shellQuote(unpacked)}; fi`,
  );
  return { artifactFile: cached, cli: `${unpacked}/package/bin/run.js` };
}

/** What `controller enroll` reads on stdin: plan, policy, token to issue, recovery key line. */
function enrollRequest(
  manifest: FleetManifest,
  input: EnrollmentInput,
  facts: HostFacts,
  artifact: LoadedArtifact,
  options: SeatOptions,
  made: { readonly plan: BootstrapPlan; readonly recovery: RecoveryKey },
): Record<string, unknown> {
  const node = facts.node as string;
  const artifactSignature = manifest.artifacts.find(
    (entry) => entry.sha256 === artifact.identity.sha256,
  )?.signature;
  return {
    schema: 'fleet.enroll/v1',
    plan: made.plan,
    policy: core.formatNodePolicy(enrollmentPolicy(input)),
    token: {
      client: `operator-${input.name}`,
      scopes: [...OPERATOR_TOKEN_SCOPES],
      ttlDays: OPERATOR_TOKEN_DAYS,
    },
    authorizedKey: authorizedKeysLine({
      publicKey: made.recovery.publicKey,
      command: [
        node,
        `${facts.home}/${input.host.runtimeDir}/current/package/bin/run.js`,
        'bootstrap',
        'receive',
        '--home',
        facts.home,
      ],
    }),
    ...(options.acceptanceTimeoutMs === undefined
      ? {}
      : { acceptanceTimeoutMs: options.acceptanceTimeoutMs }),
    ...(artifactSignature === undefined ? {} : { signature: artifactSignature }),
  };
}

/**
 * Runs `controller enroll` on the host and stores the token it answers in the credentials file
 * (prepared before the node is asked; left as it was when the enrollment fails).
 */
async function runEnroll(
  session: SshSession,
  input: EnrollmentInput,
  facts: HostFacts,
  placed: { readonly artifactFile: string; readonly cli: string },
  request: Record<string, unknown>,
  recovery: RecoveryKey,
  options: SeatOptions,
): Promise<EnrollAnswer> {
  const node = facts.node as string;
  const credentialsPath = await ensureCredentialsFile();
  const update = await core.prepareCredentialsUpdate(credentialsPath);
  try {
    options.progress(
      `${input.name}: enrolling the node (policy, TLS key, token, first generation)…`,
    );
    const ran = await session.run(
      `cd && ${shellQuote(node)} ${shellQuote(placed.cli)} controller enroll --home ${shellQuote(facts.home)} --artifact ${shellQuote(placed.artifactFile)}`,
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
    const answer = parsed.data;
    await update.commit((current) => ({
      ...current,
      hosts: {
        ...current.hosts,
        [input.name]: { token: answer.token.token, ssh: { identityFile: recovery.privateKeyFile } },
      },
    }));
    return answer;
  } catch (error) {
    await update.abort();
    throw error;
  }
}

async function enrollmentPlan(
  options: SeatOptions,
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
    artifact: planArtifactFields(artifact.identity),
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
  answer: EnrollAnswer,
  fingerprint: string,
  options: SeatOptions,
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

/** The node's error as the CLI printed it, its code kept when it names one. */
function nodeFailure(name: string, exitCode: number, stderr: string): Error {
  const text = stderr.trim();
  const code = /\b([A-Z][A-Z_]{3,})\b/.exec(text)?.[1];
  const message = `${name}: enrollment failed on the node (exit ${exitCode}): ${text.split('\n').slice(0, 5).join(' ') || 'no message'}`;
  return code !== undefined && Object.hasOwn(core.ERROR_CODES, code)
    ? new core.FleetError(code as core.ErrorCode, message)
    : new core.FleetError('ACTION_FAILED', message);
}
