/**
 * The gitconfig installer (fleet `Installer`): a plain object made by a factory function — no
 * class, no `instanceof`, nothing shared with the host but structural types.
 *
 * Operator half (pure): the desired view of `~/.gitconfig` is the block's body, i.e. the rendered
 * canonical `domains/gitconfig/gitconfig` in template space (LF endings, secrets still
 * `{{ secret.NAME }}`); the managed part of a live file is its block's body, or `null` when it has
 * no block. Both refuse what could not be installed (damaged markers, a body that is not
 * git-config syntax), so a bad canonical shows up as an `error` item in `fleet drift` and is
 * never sent to a node.
 *
 * Node half: secrets resolved, the body re-checked, the live file read through the controller's
 * `SafeFileWriter` and compared with the sha256 the operator planned against, the block spliced in
 * (everything outside it byte for byte), one compare-and-swap `replace` (backup + atomic write),
 * then a read-back of the sha256. Any failure after the write restores the file.
 */
import {
  FleetError,
  assertNoMarkers,
  decodeUtf8,
  findBlock,
  isFleetError,
  normaliseBody,
  resolveSecrets,
  spliceBlock,
  writeVerified,
  type Installer,
  type ManagedFile,
  type NodeContext,
  type NodeInstallRequest,
  type NodeInstallResult,
  type Problem,
  type SafeFileWriter,
} from '@fleet/core';
import { DOMAIN, GITCONFIG_MARKERS, gitconfigDomain } from './domain.js';
import { fragmentProblems } from './fragment.js';

const markersOf = (file: Pick<ManagedFile, 'markers'>) => file.markers ?? GITCONFIG_MARKERS;

/** Fail-closed checks of a body (template space or resolved): markers, then git-config syntax. */
function problemsOf(file: ManagedFile, body: string, source: string): Problem[] {
  try {
    assertNoMarkers(body, markersOf(file), source);
  } catch (error) {
    if (!isFleetError(error)) throw error;
    return [...(error.problems ?? [{ message: error.message }])];
  }
  return fragmentProblems(body, source);
}

function refuseBody(problems: readonly Problem[], source: string): FleetError {
  const first = problems[0];
  return new FleetError(
    'RENDER_FAILED',
    `${source} cannot go into a gitconfig block: ${first?.line ? `line ${first.line}: ` : ''}${first?.message ?? ''}${
      problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''
    }`,
    { problems },
  );
}

/** Operator half: the desired block body for a host (the rendered canonical, normalised). */
function view(file: ManagedFile, renderedCanonical: string): string {
  const body = normaliseBody(renderedCanonical.replace(/^\ufeff/, ''));
  const source = `domains/${DOMAIN}/${file.canonical}`;
  const problems = problemsOf(file, body, source);
  if (problems.length > 0) throw refuseBody(problems, source);
  return body;
}

/** Operator half: the block body of a live (redacted) file, `null` when it has none. */
function managed(file: ManagedFile, live: string): string | null {
  const block = findBlock(live, markersOf(file), file.path);
  return block === null ? null : normaliseBody(block.body);
}

/** Operator half: the problems of desired content, for callers that check before planning. */
function check(file: ManagedFile, content: string): readonly Problem[] {
  return problemsOf(file, normaliseBody(content), `domains/${DOMAIN}/${file.canonical}`);
}

function declared(fileId: string, path: string): ManagedFile {
  const file = gitconfigDomain.files.find((f) => f.id === fileId);
  if (file === undefined || file.path !== path) {
    throw new FleetError(
      'BAD_REQUEST',
      `${DOMAIN} has no file ${JSON.stringify(fileId)} at ${path}`,
    );
  }
  return file;
}

/** Node half: write the block of each requested file as one recoverable operation. */
async function install(
  ctx: NodeContext,
  request: NodeInstallRequest,
  writer: SafeFileWriter,
): Promise<NodeInstallResult> {
  if (request.domain !== DOMAIN) {
    throw new FleetError(
      'BAD_REQUEST',
      `the ${DOMAIN} installer was asked to install domain ${request.domain}`,
    );
  }
  if (new Set(request.files.map((f) => f.fileId)).size !== request.files.length) {
    throw new FleetError('BAD_REQUEST', `${DOMAIN}: a file appears twice in one install request`);
  }
  // 1. Everything is computed before the first write: a missing secret, damaged markers, a body
  //    git could not read or a live file changed since the plan refuse with nothing written.
  const secrets = await ctx.secrets();
  const planned: { path: string; expectedSha256: string | null; content: Uint8Array }[] = [];
  for (const requested of request.files) {
    const file = declared(requested.fileId, requested.path);
    const body = resolveSecrets(requested.content, secrets, requested.path);
    const problems = problemsOf(file, normaliseBody(body), requested.path);
    if (problems.length > 0) throw refuseBody(problems, requested.path);
    const live = await writer.read(requested.path);
    const liveSha = live?.sha256 ?? null;
    if (liveSha !== requested.expectedSha256) {
      throw new FleetError(
        'PRECONDITION_FAILED',
        `${requested.path}: the live file changed since the plan (sha256 ${liveSha ?? 'absent'}); nothing written`,
        { suggestions: ['plan again against the live file'] },
      );
    }
    const text = live === null ? '' : decodeUtf8(live.content, requested.path);
    const spliced = spliceBlock(text, body, markersOf(file), requested.path);
    planned.push({
      path: requested.path,
      expectedSha256: requested.expectedSha256,
      content: new TextEncoder().encode(spliced),
    });
  }

  // 2. One operation: the writer re-checks each sha256 (compare and swap), keeps a backup and
  //    replaces atomically; anything failing afterwards puts back what was already written.
  const results = await writeVerified(writer, planned);
  return { files: results, actions: [], verified: true };
}

/** Makes the domain's installer (the registry loads it lazily through `register.ts`). */
export function createGitconfigInstaller(): Installer {
  return { domain: DOMAIN, view, managed, check, install };
}
