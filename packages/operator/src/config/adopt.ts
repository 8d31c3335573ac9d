/**
 * `fleet config adopt` (contract §8.5), the service: captures one host's live file through its
 * controller (redacted on the node), turns it into the mirror candidate (host values back to
 * their placeholders, the secret scan), with `promote` also checks and writes the canonical file
 * (it must render back to the live file, and every other host it changes must equal its own live
 * file or be accepted), and commits both with their provenance trailers — or, with `dryRun`, shows
 * the commit it would make after the very checks the commit makes. Every outcome, refusals
 * included, goes into the operator's log under the capture's operation id.
 */
import type {
  AdoptCandidate,
  Adopter,
  AdoptionPreview,
  Capture,
  DomainDeclaration,
  DomainRuntime,
  ManagedFile,
  OperatorVerb,
  Registry,
  RepoWrite,
} from '@fleet/core';
import * as core from '@fleet/core';
import type { FleetContext } from './context.js';
import { loadFleetContext } from './context.js';
import { adoptModeNote, liveModeFor } from './adopt-mode.js';
import { readLiveThroughController } from './live.js';

export interface AdoptInput {
  /** The repository's working tree: a linked source is written at its target there. */
  readonly root: string;
  readonly registry: Registry;
  readonly host: string;
  /** The live file, as a node path (`~/…`). */
  readonly path: string;
  /** The commit message (default: `adopt HOST:PATH`). */
  readonly message?: string;
  /** Secret-scan findings accepted, by line number. */
  readonly allowSecretLines: readonly number[];
  /** Also make it the canonical file in domains/. */
  readonly promote: boolean;
  /** With `promote`: hosts that may drift from the new canonical. */
  readonly acceptDriftOn: readonly string[];
  /** Show the commit it would make; write nothing. */
  readonly dryRun: boolean;
  readonly timeoutMs: number;
}

export interface AdoptResult {
  readonly host: string;
  readonly path: string;
  readonly domain: string;
  readonly mirrorPath: string;
  readonly operationId: string;
  readonly liveSha256: string;
  /** The new commit, or null when the mirror already held exactly this capture (or --dry-run). */
  readonly commit: string | null;
  readonly substitutions: Readonly<Record<string, number>>;
  /** With --promote: the canonical file rewritten, and the hosts whose drift was accepted. */
  readonly promoted?: { readonly canonical: string; readonly acceptedDriftOn: readonly string[] };
  /** With --dry-run: the commit that would be made (files with their diffs, message). */
  readonly dryRun?: AdoptionPreview;
}

export interface Adoption {
  readonly result: AdoptResult;
  /** That adopt takes content only, when the live mode differs from the entry's (issue 35). */
  readonly modeNote: string | null;
}

/** What every step of one adoption shares. */
interface AdoptState {
  readonly input: AdoptInput;
  readonly context: FleetContext;
  readonly declaration: DomainDeclaration;
  readonly file: ManagedFile;
  readonly adopter: Adopter | undefined;
  readonly operationId: string;
}

/** Adopts the live file; throws the refusal or failure (as a FleetError) after logging it. */
export async function adoptLiveFile(input: AdoptInput): Promise<Adoption> {
  const context = await loadFleetContext({
    root: input.root,
    registry: input.registry,
    timeoutMs: input.timeoutMs,
  });
  const declarations = new Map(
    [...context.domains].map(([name, runtime]) => [name, runtime.declaration]),
  );
  const { declaration, file } = core.managedFileAt(
    context.repo,
    input.host,
    input.path,
    declarations,
  );
  const state: AdoptState = {
    input,
    context,
    declaration,
    file,
    adopter: await adopterOf(input.registry, declaration.domain),
    operationId: core.newOperationId(),
  };
  try {
    return await captureAndCommit(state);
  } catch (error) {
    const failure = core.asFleetError(error);
    await recordAdopt(
      state,
      adoptFailureOutcome(failure),
      failure.code,
      failure.exitCode,
      failure.message,
    );
    throw error;
  }
}

/** The domain's adopter; a domain without one adopts its files as they are. */
async function adopterOf(registry: Registry, domain: string): Promise<Adopter | undefined> {
  try {
    return await registry.adopter(domain);
  } catch (error) {
    if (!core.isFleetError(error) || error.code !== 'DOMAIN_BEHAVIOUR_ABSENT') throw error;
    return undefined;
  }
}

/** How a failed adoption is logged: unreachable, refused (exit 7 or 3) or failed. */
export function adoptFailureOutcome(failure: {
  readonly code: string;
  readonly exitCode: number;
}): OperatorVerb['outcome'] {
  if (failure.code === 'HOST_UNREACHABLE') return 'unreachable';
  const refused =
    failure.exitCode === core.ExitCode.policy || failure.exitCode === core.ExitCode.conflict;
  return refused ? 'refused' : 'failed';
}

async function recordAdopt(
  state: AdoptState,
  outcome: OperatorVerb['outcome'],
  code: string | null,
  exitCode: number,
  detail: string,
): Promise<void> {
  await core.recordOperatorVerb({
    verb: 'config adopt',
    host: state.input.host,
    operationId: state.operationId,
    domain: state.declaration.domain,
    // The commit adopt read at; the commit it makes is in the detail (contract §8.5).
    repoCommit: state.context.source.commit,
    paths: [state.input.path],
    outcome,
    code,
    exitCode,
    detail,
  });
}

/** The capture, its candidate and promotion, then the commit (or its preview). */
async function captureAndCommit(state: AdoptState): Promise<Adoption> {
  const { input, context, declaration, file } = state;
  // Asked beside the capture, only for a whole file whose entry declares a mode.
  const liveMode = liveModeFor(context, input.host, declaration.domain, file, input.path);
  const capture = await context
    .client(input.host)
    .capture({ operationId: state.operationId, path: input.path });
  const candidate = core.adoptCandidate({
    host: input.host,
    declaration,
    file,
    capture: { ...capture, host: input.host },
    variables: core.hostVariables(context.repo, input.host),
    adopter: state.adopter,
    allowSecretLines: input.allowSecretLines,
  });
  const accepted = [...new Set(input.acceptDriftOn)];
  for (const host of accepted) core.hostEntry(context.repo, host);
  const promoted = input.promote
    ? await promotion(state, { capture, candidate, accepted })
    : undefined;
  const message = core.adoptMessage({
    message: input.message ?? `adopt ${input.host}:${input.path}${promoted ? ' (promoted)' : ''}`,
    host: input.host,
    operationId: state.operationId,
    capture,
    ...(promoted ? { promotedTo: promoted.path, acceptedDriftOn: accepted } : {}),
  });
  const also = promoted ? [promoted] : [];
  const result = {
    host: input.host,
    path: input.path,
    domain: declaration.domain,
    mirrorPath: candidate.mirrorPath,
    operationId: state.operationId,
    liveSha256: capture.sha256,
    substitutions: candidate.substitutions,
    ...(promoted ? { promoted: { canonical: promoted.path, acceptedDriftOn: accepted } } : {}),
  };
  if (input.dryRun) {
    const writes = [{ path: candidate.mirrorPath, content: candidate.content }, ...also];
    const preview = await previewCommit(state, writes, message);
    await recordAdopt(state, 'unchanged', null, 0, 'dry run: nothing written');
    return { result: { ...result, commit: null, dryRun: preview }, modeNote: null };
  }
  const commit = await core.commitAdoption({
    git: context.git,
    root: input.root,
    candidate,
    message,
    also,
  });
  await recordAdopt(
    state,
    commit ? 'ok' : 'unchanged',
    null,
    0,
    commit ? `committed ${commit}` : 'the repository already held this capture',
  );
  // Said only when the live mode differs from the entry's (issue 35).
  const modeNote = adoptModeNote(input.path, file, await liveMode);
  return { result: { ...result, commit }, modeNote };
}

/**
 * The dry run: the commit adopt would make, after the very checks the commit makes (no link on a
 * write's way, every path clean), so it refuses what the real run refuses; nothing written.
 */
async function previewCommit(
  state: AdoptState,
  writes: readonly RepoWrite[],
  message: string,
): Promise<AdoptionPreview> {
  const { context } = state;
  await core.checkAdoptionWrites(
    context.git,
    state.input.root,
    writes.map((write) => write.path),
  );
  return core.previewAdoption({ git: context.git, writes, message });
}

/**
 * The canonical file `promote` writes, once checked: it must render back to the host's live
 * file, and every other host it changes must then equal its own live file, or be accepted.
 */
async function promotion(
  state: AdoptState,
  captured: {
    readonly capture: Capture;
    readonly candidate: AdoptCandidate;
    readonly accepted: readonly string[];
  },
): Promise<RepoWrite> {
  const { context, declaration, file } = state;
  const canonical = core.canonicalPath(declaration, file);
  const snapshot = await core.readCanonicalSnapshot(
    context.git,
    core.canonicalPaths([...context.domains.values()]),
    context.source.commit,
  );
  const content = core.promotedCanonical({
    declaration,
    file,
    canonical: snapshot.atRef.get(canonical) ?? null,
    candidate: captured.candidate.content,
    adopter: state.adopter,
  });
  const runtime = context.domains.get(declaration.domain) as DomainRuntime;
  const check = await core.checkPromotion({
    repo: context.repo,
    domains: context.domains,
    snapshot,
    host: state.input.host,
    declaration,
    file,
    newCanonical: content,
    liveManaged: runtime.operator.managed(file, captured.capture.content),
    readLive: readLiveThroughController(context),
  });
  const refusal = core.promotionRefusal(check, captured.accepted);
  if (refusal) throw refusal;
  // A source that is a link in the repository is written at its target, never over the link.
  return { path: core.promotionWritePath(state.input.root, canonical), content };
}

/** What a commit (or its absence) of the adoption says, for a person (pure). */
export function adoptedLine(result: AdoptResult): string {
  const also = result.promoted ? ` and ${result.promoted.canonical}` : '';
  return result.commit
    ? `Adopted ${result.host}:${result.path} as ${result.mirrorPath}${also} (commit ${result.commit.slice(0, 12)}).`
    : `${result.mirrorPath}${also} already hold exactly this capture: nothing to commit.`;
}

/** The commit `--dry-run` would make, for a person (pure). */
export function renderAdoptPreview(
  preview: AdoptionPreview,
  escape: (text: string) => string,
): string {
  const lines = ['Dry run: nothing written. The commit would be:', ''];
  for (const line of preview.message.trimEnd().split('\n')) lines.push(`    ${escape(line)}`);
  for (const file of preview.files) {
    lines.push('', `  ${escape(file.path)}`);
    for (const line of escape(file.diff).split('\n')) lines.push(`    ${line}`);
  }
  return lines.join('\n');
}
