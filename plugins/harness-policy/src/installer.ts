/**
 * The harness-policy installer (contract §6, §8.4, §10.3). Coupling: none — writing the files is the
 * whole operation.
 *
 * Operator half (pure): CLAUDE.md is the rendered canonical, whole; AGENTS.md and GEMINI.md are
 * compared and installed by their block only, whose desired body is the canonical CLAUDE.md's
 * policy section, regenerated from the canonical on every run (never a stored snapshot).
 *
 * Node half: every secret is resolved and every block file read, checked and spliced *before the
 * first write*, so a missing secret, damaged markers or a changed file refuse the whole request
 * with nothing written. Then each file goes through the controller's `SafeFileWriter` (compare and
 * swap, backup, atomic durable replace); the request is one operation, so a failure restores the
 * files already written. Finally every file is read back and its sha256 compared.
 */
import {
  FleetError,
  isFleetError,
  readHomeFile,
  requireDistinctFiles,
  requireDomain,
  resolveSecrets,
  type BlockMarkers,
  type Installer,
  type ManagedFile,
  type NodeContext,
  type NodeInstallRequest,
  type NodeInstallResult,
  type Problem,
  type SafeFileWriter,
  splicedLive,
  writeVerified,
} from '@fleet/core/plugin';
import { assertNoMarkers, extractPolicySection, findBlock, normaliseBody } from './block.js';
import { harnessPolicyDomain, POLICY_MARKERS } from './domain.js';

const DOMAIN = harnessPolicyDomain.domain;

function markersOf(file: Pick<ManagedFile, 'markers'>): BlockMarkers {
  return file.markers ?? POLICY_MARKERS;
}

/** Operator half: the desired managed content (whole file, or the block's body). */
function view(file: ManagedFile, renderedCanonical: string): string {
  if (file.kind === 'whole') return renderedCanonical;
  return extractPolicySection(renderedCanonical, markersOf(file), `canonical ${file.canonical}`);
}

/** Operator half: the managed part of a live (redacted) file, comparable with {@link view}. */
function managed(file: ManagedFile, live: string): string | null {
  if (file.kind === 'whole') return live;
  const block = findBlock(live, markersOf(file), file.path);
  return block === null ? null : normaliseBody(block.body);
}

/**
 * Operator half: refuses desired content that could not be installed — a canonical whose markers
 * are damaged, or a policy section that itself contains a marker. Accepts either the rendered
 * canonical or a view of it (a section has no markers, so it is its own section).
 */
function check(file: ManagedFile, content: string): readonly Problem[] {
  try {
    const section = extractPolicySection(content, markersOf(file), `canonical ${file.canonical}`);
    assertNoMarkers(section, markersOf(file), `canonical ${file.canonical}`);
    return [];
  } catch (error) {
    if (!isFleetError(error)) throw error;
    return error.problems && error.problems.length > 0
      ? error.problems
      : [{ message: error.message }];
  }
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

function declared(fileId: string): ManagedFile {
  const file = harnessPolicyDomain.files.find((f) => f.id === fileId);
  if (file === undefined) {
    throw new FleetError('BAD_REQUEST', `${DOMAIN} has no file ${JSON.stringify(fileId)}`);
  }
  return file;
}

type Reader = NonNullable<SafeFileWriter['read']>;

function readerOf(writer: SafeFileWriter): Reader {
  if (typeof writer.read !== 'function') {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `${DOMAIN}: this controller's writer cannot read a live file, which a block install needs; nothing written`,
    );
  }
  return writer.read.bind(writer);
}

/** The final bytes of one file: the resolved content, or the live file with its block spliced. */
async function finalBytes(
  file: ManagedFile,
  path: string,
  expectedSha256: string | null,
  resolved: string,
  writer: SafeFileWriter,
): Promise<Uint8Array> {
  if (file.kind === 'whole') return encode(resolved);
  return splicedLive(
    { path, expectedSha256, body: resolved, markers: markersOf(file) },
    readerOf(writer),
  );
}

/**
 * The sha256 a file reads back as: through the writer's own checked read when it has one,
 * otherwise (an older controller: only whole files can reach this point) core's home-file read,
 * which does not follow a final symlink.
 */
async function readBackSha(
  ctx: NodeContext,
  writer: SafeFileWriter,
  path: string,
): Promise<string | null> {
  if (typeof writer.read === 'function') return (await writer.read(path))?.sha256 ?? null;
  return (await readHomeFile(ctx.home, path))?.sha256 ?? null;
}

async function install(
  ctx: NodeContext,
  request: NodeInstallRequest,
  writer: SafeFileWriter,
): Promise<NodeInstallResult> {
  requireDomain(request, DOMAIN);
  const files = request.files.map((requested) => ({ requested, file: declared(requested.fileId) }));
  requireDistinctFiles(request, DOMAIN);

  // 1. Secrets, on the node, before anything else: a missing name changes nothing.
  const secrets = await ctx.secrets();
  const resolved = files.map(({ requested }) =>
    resolveSecrets(requested.content, secrets, requested.path),
  );

  // 2. Every file's final bytes, before the first write: refusals (markers, a changed live file,
  //    an encoding) leave every file of the request untouched.
  const planned: { path: string; expectedSha256: string | null; content: Uint8Array }[] = [];
  for (const [index, { requested, file }] of files.entries()) {
    const content = await finalBytes(
      file,
      requested.path,
      requested.expectedSha256,
      resolved[index] as string,
      writer,
    );
    planned.push({ path: requested.path, expectedSha256: requested.expectedSha256, content });
  }

  // 3. One operation: the writer re-checks each expected sha256 (compare and swap), so a file
  //    changed since step 2 is refused too; anything failing restores what was already written.
  const results = await writeVerified(writer, planned, {
    readBack: (path) => readBackSha(ctx, writer, path),
  });
  return { files: results, actions: [], verified: true };
}

/** The domain's installer, loaded lazily by the registry (`register.ts`). */
export const harnessPolicyInstaller: Installer = { domain: DOMAIN, view, managed, check, install };
