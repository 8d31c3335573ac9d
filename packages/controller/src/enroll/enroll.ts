/**
 * The node's half of `fleet host add` (contract §12.1, docs/getting-started.md): run over the
 * operator's SSH session — a shell on the node, which is why the node policy may travel this way
 * and never through a token (contract §5.1) — from the runtime artifact the operator uploaded and
 * unpacked, on a host where no fleet runs yet.
 *
 * In order, each step idempotent so that an interrupted enrollment can be run again:
 * 1. the request read and checked (zod); the plan's own id checked; the artifact's sha256 equal to
 *    the plan's — nothing is written before all three hold;
 * 2. the node policy the operator showed in its plan written (an equal one kept; another one kept
 *    beside it as `node-policy.yaml.<stamp>.bak`, 0600, and replaced);
 * 3. the recovery key's forced-command line put in `~/.ssh/authorized_keys` (replacing an older
 *    `fleet-bootstrap` line, every other line kept);
 * 4. the operator's token issued into the node's own store (shown once, in this answer);
 * 5. the artifact staged as a bootstrap transaction — the stage makes the controller's TLS key
 *    and self-signed certificate here for the plan's listen (the key never leaves the node) —
 *    and handed to a runner outside the session's reach, as the recovery receiver does
 *    (docs/runtime-lifecycle.md): it installs the supervisor definition with the plan's listen
 *    address, starts the controller and accepts it.
 *
 * A failure after the token was issued revokes it. Every step is logged to
 * `~/.local/state/fleet/enroll.log` (0600).
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from '@fleet/core/zod';
import {
  FleetError,
  isScope,
  nodePolicyFile,
  parseNodePolicy,
  readPlan,
  type BootstrapPlan,
  type Registry,
  type Scope,
} from '@fleet/core/node';
import { createNodeContext, systemClock } from '../context.js';
import { createExclusive, fsyncDir } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { expectationOf } from '../lifecycle/expectation.js';
import { LocalIdentityProbe } from '../lifecycle/live.js';
import { priorFromPointer, stageTransaction } from '../lifecycle/stage.js';
import { spawnRunner } from '../lifecycle/spawn.js';
import { nodeSupervisor } from '../lifecycle/supervisor.js';
import { writeNodePolicy } from '../policy/file.js';
import { statePaths } from '../state-paths.js';
import { TokenStore } from '../tokens/store.js';

export const ENROLL_REQUEST_SCHEMA = 'fleet.enroll/v1';

/** The comment the recovery key's authorized_keys line ends with (operator: authorized-keys.ts). */
const RECOVERY_KEY_COMMENT = 'fleet-bootstrap';

export const enrollRequestSchema = z.strictObject({
  schema: z.literal(ENROLL_REQUEST_SCHEMA),
  /** The bootstrap plan for this host (checked with its own id). */
  plan: z.unknown(),
  /** The node policy's text, exactly as the operator's plan showed it. */
  policy: z
    .string()
    .min(1)
    .max(64 * 1024),
  token: z.strictObject({
    client: z.string().min(1).max(64),
    scopes: z.array(z.string()).min(1).max(7),
    ttlDays: z.number().int().min(1).max(366),
  }),
  /** The recovery key's whole `restrict,command="…" <key> fleet-bootstrap` line, or none. */
  authorizedKey: z
    .string()
    .max(4096)
    .regex(/^restrict,command="[^"\r\n]+" [^\r\n]+ fleet-bootstrap$/)
    .nullable(),
  acceptanceTimeoutMs: z.number().int().min(1000).max(600_000).optional(),
  /**
   * The artifact's release signature (ADR 0019; armored or its one-line body): the stage checks
   * it against the written policy's `runtime.trustedKeys`. Absent: staged only when that policy
   * says `runtime.allowUnsigned`.
   */
  signature: z
    .string()
    .max(16 * 1024)
    .optional(),
});
export type EnrollRequest = z.infer<typeof enrollRequestSchema>;

export interface EnrollResult {
  readonly schema: 'fleet.enroll-result/v1';
  readonly nodeId: string;
  readonly policy: 'written' | 'unchanged' | 'replaced';
  readonly policyBackup: string | null;
  /** The certificate the controller will serve (made on this node at stage). */
  readonly tls: { readonly fingerprint: string } | null;
  readonly authorizedKey: 'installed' | 'unchanged' | 'none';
  readonly token: {
    readonly id: string;
    readonly token: string;
    readonly client: string;
    readonly scopes: readonly string[];
    readonly expiresAt: string;
  };
  readonly transaction: string;
  readonly buildId: string;
  readonly reused: boolean;
  readonly runner: { readonly pid: number; readonly log: string; readonly via: string };
}

export interface EnrollInput {
  readonly home: string;
  readonly artifactFile: string;
  readonly request: unknown;
  readonly registry: Registry;
  readonly now?: () => Date;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Reads and checks the request; nothing is written. */
export function readEnrollRequest(value: unknown): { request: EnrollRequest; plan: BootstrapPlan } {
  const parsed = enrollRequestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FleetError(
      'BAD_REQUEST',
      `not an enrollment request: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'bad shape'}; nothing was written`,
    );
  }
  const unknown = parsed.data.token.scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw new FleetError('BAD_REQUEST', `unknown scope ${unknown.join(', ')}; nothing was written`);
  }
  const { policy } = parseNodePolicy(parsed.data.policy, 'the enrollment request policy');
  if (policy.lab !== undefined) {
    // A lab's dev plugins load code from a folder, outside any signed runtime
    // (serve/dev-plugins.ts): only `fleet lab up` writes that section, never an enrollment.
    throw new FleetError(
      'POLICY_REFUSED',
      'the enrollment request policy has a lab section (lab dev plugins): only fleet lab up writes one, for a lab node; an enrolled node runs only the plugins its signed runtime carries; nothing was written',
    );
  }
  return { request: parsed.data, plan: readPlan(parsed.data.plan, 'the enrollment request') };
}

export async function enrollNode(input: EnrollInput): Promise<EnrollResult> {
  const { request, plan } = readEnrollRequest(input.request);
  const now = input.now ?? (() => new Date());
  const log = (line: string) => appendEnrollLog(input.home, `${now().toISOString()} ${line}`);
  const bytes = await readFile(input.artifactFile).catch((error: unknown) => {
    throw new FleetError(
      'GENERATION_INVALID',
      `cannot read the artifact ${input.artifactFile} (${errnoOf(error) ?? String(error)}); nothing was written`,
    );
  });
  if (sha256(bytes) !== plan.artifact.sha256) {
    throw new FleetError(
      'GENERATION_INVALID',
      `${input.artifactFile} is not the plan's artifact (sha256 ${sha256(bytes).slice(0, 12)}, the plan names ${plan.artifact.sha256.slice(0, 12)}); nothing was written`,
    );
  }
  await log(`enroll: plan ${plan.id} for ${plan.nodeId}, artifact ${plan.artifact.sha256}`);

  const policy = await placePolicy(input.home, request.policy, now());
  await log(`enroll: node policy ${policy.outcome}`);
  const authorizedKey =
    request.authorizedKey === null
      ? 'none'
      : await placeAuthorizedKey(input.home, request.authorizedKey);
  await log(`enroll: recovery key ${authorizedKey}`);

  const store = new TokenStore(statePaths(input.home), systemClock);
  const issued = await store.issue({
    client: request.token.client,
    scopes: request.token.scopes as Scope[],
    ttlMs: request.token.ttlDays * 86_400_000,
  });
  await log(`enroll: token ${issued.record.id} issued to ${request.token.client}`);
  try {
    const { tls, ...staged } = await stageAndRun(input, plan, request, bytes);
    if (tls) await log(`enroll: TLS certificate ${tls.fingerprint}`);
    await log(
      `enroll: transaction ${staged.transaction} staged; runner ${staged.runner.pid} (${staged.runner.via})`,
    );
    return {
      schema: 'fleet.enroll-result/v1',
      nodeId: plan.nodeId,
      policy: policy.outcome,
      policyBackup: policy.backup,
      tls: tls ? { fingerprint: tls.fingerprint } : null,
      authorizedKey,
      token: {
        id: issued.record.id,
        token: issued.token,
        client: request.token.client,
        scopes: request.token.scopes,
        expiresAt: issued.record.expiresAt,
      },
      ...staged,
    };
  } catch (error) {
    // The token was shown to no one: take it back before the error goes out.
    await store.revoke(issued.record.id).catch(() => undefined);
    await log(
      `enroll: failed (${(error as { code?: string }).code ?? 'INTERNAL'}); token ${issued.record.id} revoked`,
    ).catch(() => undefined);
    throw error;
  }
}

async function stageAndRun(
  input: EnrollInput,
  plan: BootstrapPlan,
  request: EnrollRequest,
  bytes: Buffer,
) {
  const { acceptanceTimeoutMs } = request;
  const ctx = createNodeContext({ home: input.home, nodeId: plan.nodeId });
  const supervised = await nodeSupervisor(input.registry, ctx, plan.supervisor);
  const running = supervised?.observed?.nodeIdFlag;
  if (running !== undefined && running !== plan.nodeId) {
    throw new FleetError(
      'NODE_ID_MISMATCH',
      `the plan is for node ${plan.nodeId}, but this node's supervisor runs ${running}; nothing was staged`,
    );
  }
  const probe = new LocalIdentityProbe(input.home);
  try {
    const identity = await probe.identity(supervised?.observed?.command, plan.nodeId);
    const prior =
      identity === null
        ? await priorFromPointer(input.home, ctx.platform, plan.nodeId)
        : expectationOf(identity);
    const staged = await stageTransaction({
      home: input.home,
      platform: ctx.platform,
      registry: input.registry,
      nodeId: plan.nodeId,
      kind: 'bootstrap',
      supervisor: plan.supervisor,
      planId: plan.id,
      target: plan.target,
      ...(plan.listen
        ? {
            listen: {
              bind: plan.listen.bind,
              port: plan.listen.port,
              tls: plan.listen.tls,
              allowedHosts: plan.listen.allowedHosts,
            },
          }
        : {}),
      artifact: { sha256: plan.artifact.sha256, bytes },
      prior,
      ...(request.signature === undefined ? {} : { signature: request.signature }),
    });
    const runner = await spawnRunner({
      home: input.home,
      nodeId: plan.nodeId,
      registry: input.registry,
      supervisor: plan.supervisor,
      mode: 'activate',
      transaction: staged.transaction,
      ...(acceptanceTimeoutMs === undefined ? {} : { acceptanceTimeoutMs }),
    });
    // No go file: the runner begins when this process ends (its --wait-pid), after the answer.
    return {
      tls: staged.tls ?? null,
      transaction: staged.transaction,
      buildId: staged.buildId,
      reused: staged.reused,
      runner: { pid: runner.pid, log: runner.log, via: runner.via },
    };
  } finally {
    await probe.release();
  }
}

/** Writes the policy unless an equal one is there; keeps a different one as a backup. */
async function placePolicy(
  home: string,
  text: string,
  now: Date,
): Promise<{ outcome: EnrollResult['policy']; backup: string | null }> {
  const file = nodePolicyFile(home);
  const existing = await readFile(file, 'utf8').catch((error: unknown) => {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  });
  if (existing === text) return { outcome: 'unchanged', backup: null };
  if (existing === null) {
    await writeNodePolicy(home, text);
    return { outcome: 'written', backup: null };
  }
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const backup = `${file}.${stamp}.bak`;
  await createExclusive(backup, existing);
  await writeNodePolicy(home, text, { force: true });
  return { outcome: 'replaced', backup };
}

/**
 * Puts `line` in `~/.ssh/authorized_keys` in place of any earlier fleet-bootstrap line; every
 * other line is kept as it was. Written to a temp file (0600) beside it, fsync'd and renamed.
 */
async function placeAuthorizedKey(home: string, line: string): Promise<'installed' | 'unchanged'> {
  const file = join(home, '.ssh', 'authorized_keys');
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const existing = await readFile(file, 'utf8').catch((error: unknown) => {
    if (errnoOf(error) === 'ENOENT') return '';
    throw error;
  });
  const lines = existing.split('\n').filter((entry) => entry !== '');
  if (lines.includes(line)) return 'unchanged';
  const kept = lines.filter((entry) => !entry.trimEnd().endsWith(` ${RECOVERY_KEY_COMMENT}`));
  const temp = join(dirname(file), `.authorized_keys.fleet-${randomBytes(6).toString('hex')}`);
  await createExclusive(temp, `${[...kept, line].join('\n')}\n`);
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dirname(file));
  return 'installed';
}

/** One line appended to `~/.local/state/fleet/enroll.log`: 0600, never through a symlink. */
async function appendEnrollLog(home: string, line: string): Promise<void> {
  const path = join(statePaths(home).root, 'enroll.log');
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.write(`${line.replace(/[\r\n]/g, ' ')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
