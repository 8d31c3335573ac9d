/**
 * Opening a runtime transaction on the node (contract §11, §12): the node policy must allow a
 * runtime change and admit the artifact's release signature (ADR 0019: by one of its
 * `runtime.trustedKeys`, or none with `runtime.allowUnsigned`), the uploaded artifact's sha256 is
 * checked again after transfer, the journal's `begin` records the target and the prior runtime
 * (the rollback target), the generation is staged immutably, and `staged` is journaled. Shared by
 * the controller's `runtime-stage` route and the SSH recovery receiver.
 */
import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FLEET_PROTOCOL_VERSION,
  FleetError,
  isFleetError,
  GENERATION_ARTIFACT,
  GENERATION_MANIFEST,
  parseStrictJson,
  readCurrentPointer,
  runtimeLayout,
  type NodeRuntimePolicy,
  type Platform,
  type ControllerListen,
  type Registry,
  type RuntimeExpectation,
  type SupervisorKind,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { ensurePrivateDir } from '../fs/durable.js';
import {
  heldGeneration,
  stageGeneration,
  type StagedGeneration,
} from '../generations/generation.js';
import { lastTransaction, RuntimeJournal } from '../generations/journal.js';
import { withRuntimeLock } from '../generations/lock.js';
import { generationManifestSchema } from '../generations/verify.js';
import { TEMP_PREFIX } from '../state-paths.js';
import { requireSupervisorOfPolicy } from './supervisor.js';
import { requireBootstrapAllowed } from './policy.js';
import { writeListenRecord } from './listen-record.js';
import { admitRelease, requireSignatureOrLeave, type ReleaseAdmission } from './signature.js';
import { ensureControllerCertificate } from '../tls/certificate.js';

export interface StageTransactionInput {
  readonly home: string;
  readonly platform: Platform;
  readonly registry: Registry;
  readonly nodeId: string;
  readonly kind: 'upgrade' | 'bootstrap';
  readonly supervisor: string;
  readonly planId: string | null;
  readonly target: RuntimeExpectation;
  /**
   * `bytes: null`: the request sent none — stage from the generation the node holds with that
   * sha256 (verified again under the lock, `GENERATION_NOT_HELD` otherwise).
   */
  readonly artifact: { readonly sha256: string; readonly bytes: Buffer | null };
  /** What the running runtime must report to be accepted again: the rollback target. */
  readonly prior: RuntimeExpectation | null;
  /**
   * Where the new controller listens (fleet.yaml's `controller` URL, core `controllerListen`):
   * kept for the runner, which installs these flags; absent, it keeps the installed unit's.
   */
  readonly listen?: ControllerListen;
  /**
   * The release signature (armored, or its one-line base64 body; ADR 0019): checked against the
   * node policy's `runtime.trustedKeys` over the artifact's exact bytes — the upload's, or the
   * held generation's `artifact.tgz` — before anything is journaled. Absent: refused
   * (`ARTIFACT_UNSIGNED`) unless the policy says `runtime.allowUnsigned`.
   */
  readonly signature?: string;
}

export interface StagedTransaction {
  readonly transaction: string;
  readonly buildId: string;
  readonly treeHash: string;
  readonly reused: boolean;
  readonly prior: string | null;
  /** The certificate the new controller serves (a listen with TLS), in fleet.yaml's form. */
  readonly tls?: { readonly fingerprint: string };
}

/** A stage and how its artifact was admitted ({@link stageRelease}). */
export interface StagedRelease {
  readonly staged: StagedTransaction;
  /**
   * Whose release signature admitted the artifact, or that none did (allowUnsigned): for the
   * stage's audit record. Not in the journal — older generations read it strictly and a rollback
   * runs one (docs/runtime-lifecycle.md) — and not in {@link StagedTransaction}, whose fields
   * callers pass on to answers older operators read strictly.
   */
  readonly admission: ReleaseAdmission;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Checks everything that needs no lock: policy, target, the bytes as they arrived and their
 * signature. Answers how uploaded bytes were admitted (`null` for a held generation: its bytes
 * are read and checked under the lock).
 */
async function precheck(input: StageTransactionInput): Promise<Prechecked> {
  // Every runtime change — an upgrade as much as a bootstrap — needs bootstrap.allow (issue 36).
  const runtime = await requireBootstrapAllowed(input.home, input.supervisor, input.registry);
  await requireSupervisorOfPolicy(input.home, input.supervisor);
  requireSignatureOrLeave(runtime, input.signature);
  if (input.target.nodeId !== input.nodeId) {
    throw new FleetError(
      'NODE_ID_MISMATCH',
      `the request is for node ${input.target.nodeId}, but this node is ${input.nodeId}; nothing was staged`,
    );
  }
  if (input.target.build.sha256 !== input.artifact.sha256) {
    throw new FleetError('BAD_REQUEST', "the target's build is not the uploaded artifact");
  }
  const actual = input.artifact.bytes === null ? null : sha256(input.artifact.bytes);
  if (actual !== null && actual !== input.artifact.sha256) {
    throw new FleetError(
      'GENERATION_INVALID',
      `the artifact's sha256 after transfer is ${actual}, not ${input.artifact.sha256}; nothing was staged`,
    );
  }
  const admission =
    input.artifact.bytes === null
      ? null
      : admitRelease(runtime, input.signature, input.artifact.bytes);
  const adapter = await input.registry.bootstrapAdapter(input.supervisor as SupervisorKind);
  if (!adapter.platforms.includes(input.platform)) {
    throw new FleetError(
      'USAGE',
      `the ${input.supervisor} adapter does not run on ${input.platform}; nothing was staged`,
    );
  }
  // A supervisor that cannot be driven (no lingering, no user bus, no lab supervisor) would
  // leave a flipped pointer and no way to restart: refused before anything is written.
  const problems = await adapter.preflight(
    createNodeContext({ home: input.home, nodeId: input.nodeId, platform: input.platform }),
  );
  if (problems.length > 0) {
    throw new FleetError(
      'PRECONDITION_FAILED',
      `the ${input.supervisor} supervisor cannot be driven on this node: ${problems.map((p) => `${p.code}: ${p.message}`).join('; ')}; nothing was staged`,
    );
  }
  return { runtime, admission };
}

interface Prechecked {
  /** The node policy's `runtime` section, as read for this stage. */
  readonly runtime: NodeRuntimePolicy | undefined;
  readonly admission: ReleaseAdmission | null;
}

/**
 * The held generation's `artifact.tgz` admitted by its signature, as uploaded bytes are: read
 * once, its sha256 held against the build id (what `heldGeneration` verified), then checked.
 */
async function admitHeld(
  input: StageTransactionInput,
  runtime: NodeRuntimePolicy | undefined,
  held: StagedGeneration,
): Promise<ReleaseAdmission> {
  if (input.signature === undefined) return admitRelease(runtime, undefined, Buffer.alloc(0)); // precheck allowed it
  const bytes = await readFile(join(held.directory, GENERATION_ARTIFACT));
  if (sha256(bytes) !== held.buildId) {
    throw new FleetError(
      'GENERATION_NOT_HELD',
      `generations/${held.buildId}/${GENERATION_ARTIFACT} changed while it was read; nothing was staged: send the artifact`,
    );
  }
  return admitRelease(runtime, input.signature, bytes);
}

export async function stageTransaction(input: StageTransactionInput): Promise<StagedTransaction> {
  return (await stageRelease(input)).staged;
}

/** Where a stage's generation comes from: the generation the node holds, or uploaded bytes. */
type StageSource = { readonly held: StagedGeneration } | { readonly bytes: Buffer };

/** {@link stageTransaction}, answering also how the artifact was admitted (ADR 0019). */
export async function stageRelease(input: StageTransactionInput): Promise<StagedRelease> {
  const checked = await precheck(input);
  return withRuntimeLock(input.home, async () => {
    const journal = new RuntimeJournal(input.home);
    await requireNoOpenTransaction(journal);
    const source = await sourceOf(input);
    // A held generation's signature is checked against its own bytes, still before the journal.
    const admission =
      checked.admission ??
      ('held' in source
        ? await admitHeld(input, checked.runtime, source.held)
        : admitRelease(checked.runtime, input.signature, source.bytes));
    const certificate = await certificateFor(input);
    const txn = await journal.begin({
      kind: input.kind,
      supervisor: input.supervisor,
      target: input.target,
      prior: input.prior,
      planId: input.planId,
    });
    const staged = await stageJournaled(input, journal, txn, source);
    return {
      staged: {
        transaction: txn,
        buildId: staged.buildId,
        treeHash: staged.manifest.treeHash,
        reused: staged.reused,
        prior: input.prior?.build.sha256 ?? null,
        ...(certificate === null ? {} : { tls: { fingerprint: certificate.fingerprint } }),
      },
      admission,
    };
  });
}

/** Refuses a stage while another runtime transaction is open (`LOCKED`), closing an unended one. */
async function requireNoOpenTransaction(journal: RuntimeJournal): Promise<void> {
  let last = lastTransaction(await journal.readTrusted());
  if (last && !last.ended && (last.last.step === 'accepted' || last.last.step === 'rolled-back')) {
    // A runner killed between its outcome and `end` (docs/runtime-lifecycle.md, "kill -9 at
    // every step"): the outcome is journaled and status reports it; only the closing record is
    // missing. Writing it here keeps that transaction from blocking every later one.
    await journal.append(last.id, 'end', { outcome: last.last.step });
    last = lastTransaction(await journal.readTrusted());
  }
  if (last && !last.ended) {
    throw new FleetError(
      'LOCKED',
      `runtime transaction ${last.id} (${last.begin.data.kind}) is still open at "${last.last.step}"; see \`fleet bootstrap status\`, or roll it back`,
    );
  }
}

/**
 * Without bytes the held generation is verified before anything is journaled: a node that does
 * not hold it opens no transaction, and the operator uploads instead.
 */
async function sourceOf(input: StageTransactionInput): Promise<StageSource> {
  if (input.artifact.bytes !== null) return { bytes: input.artifact.bytes };
  return {
    held: await heldGeneration(
      input.home,
      input.platform,
      input.artifact.sha256,
      input.target.build.commit,
    ),
  };
}

/**
 * The certificate is node configuration, not runtime: made (or kept) before the journal opens, so
 * a node that cannot make one opens no transaction. Its key never leaves the node; its
 * fingerprint goes back for the operator to hold against fleet.yaml's pin.
 */
async function certificateFor(
  input: StageTransactionInput,
): Promise<{ readonly fingerprint: string } | null> {
  return input.listen?.tls === true
    ? await ensureControllerCertificate(input.home, input.listen)
    : null;
}

/**
 * The journaled part of a stage: the listen record, the generation (uploaded bytes through a temp
 * file, removed either way), `staged`. A failure journals `failed` and `end` before it is thrown.
 */
async function stageJournaled(
  input: StageTransactionInput,
  journal: RuntimeJournal,
  txn: string,
  source: StageSource,
): Promise<StagedGeneration> {
  const layout = runtimeLayout(input.home, input.platform);
  const upload = join(layout.root, `${TEMP_PREFIX}upload-${randomBytes(6).toString('hex')}.tgz`);
  try {
    if (input.listen !== undefined) await writeListenRecord(input.home, txn, input.listen);
    const staged = 'held' in source ? source.held : await stageUpload(input, source.bytes, upload);
    await journal.append(txn, 'staged', {
      buildId: staged.buildId,
      treeHash: staged.manifest.treeHash,
      reused: staged.reused,
    });
    return staged;
  } catch (error) {
    const fleet = isFleetError(error) ? error : null;
    await journal
      .append(txn, 'failed', {
        during: 'stage',
        code: fleet?.code ?? 'IO_ERROR',
        message: (error as Error).message.slice(0, 500),
        criteria: [],
      })
      .then(() => journal.append(txn, 'end', { outcome: 'failed' }))
      .catch(() => undefined); // the journal's own failure: status reports the open transaction
    throw error;
  } finally {
    await rm(upload, { force: true });
  }
}

/**
 * Closes a transaction that was staged but may not go on: not audited, so not done (contract
 * §15; `AUDIT_UNAVAILABLE`, the default), or refused before activation — the certificate the node
 * made is not the one fleet.yaml pins (`TLS_FINGERPRINT_MISMATCH`, issue 35). Journaled `failed`
 * then `end`, so it neither stays open nor blocks the next stage. The generation stays staged
 * (immutable, reusable by a later stage).
 */
export async function abandonStaged(
  home: string,
  txn: string,
  reason: string,
  code = 'AUDIT_UNAVAILABLE',
): Promise<void> {
  await withRuntimeLock(home, async () => {
    const journal = new RuntimeJournal(home);
    const open = lastTransaction(await journal.readTrusted());
    if (!open || open.id !== txn || open.ended || open.last.step !== 'staged') return;
    await journal.append(txn, 'failed', {
      during: 'stage',
      code,
      message: reason.slice(0, 500),
      criteria: [],
    });
    await journal.append(txn, 'end', { outcome: 'failed' });
  });
}

/** The uploaded bytes through a private temp file into `stageGeneration` (which reads a path). */
async function stageUpload(
  input: StageTransactionInput,
  bytes: Buffer,
  upload: string,
): Promise<StagedGeneration> {
  await ensurePrivateDir(input.home, runtimeLayout(input.home, input.platform).root);
  await writeExclusive(upload, bytes);
  return stageGeneration({
    home: input.home,
    platform: input.platform,
    artifact: upload,
    sha256: input.artifact.sha256,
    commit: input.target.build.commit,
  });
}

async function writeExclusive(path: string, bytes: Buffer): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The prior runtime when no controller answers (the recovery path): the generation `current`
 * names, by its manifest. Its catalog is unknown, so none is required of it; node id, package,
 * build and protocol still are. `null` when `current` names no verifiable manifest.
 */
export async function priorFromPointer(
  home: string,
  platform: Platform,
  nodeId: string,
): Promise<RuntimeExpectation | null> {
  const layout = runtimeLayout(home, platform);
  const pointer = await readCurrentPointer(layout);
  if (pointer.state !== 'set') return null;
  try {
    const raw = parseStrictJson(
      await readFile(join(layout.generation(pointer.buildId), GENERATION_MANIFEST), 'utf8'),
      GENERATION_MANIFEST,
      'GENERATION_INVALID',
    );
    const manifest = generationManifestSchema.parse(raw);
    if (manifest.package === null) return null;
    return {
      nodeId,
      package: manifest.package.name,
      version: manifest.package.version,
      build: { sha256: manifest.buildId, commit: manifest.commit },
      protocol: { min: 1, max: FLEET_PROTOCOL_VERSION },
      catalog: { domains: [], probers: [], bootstrapAdapters: [] },
    };
  } catch {
    return null;
  }
}
