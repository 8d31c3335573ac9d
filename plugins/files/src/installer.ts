/**
 * The files installer (contract §6, §8.4, §10.4). Coupling: none — writing the files is the whole
 * operation.
 *
 * Operator half (pure): a `whole` entry's view is its rendered source; a `block` entry's view is
 * its rendered source as the block's body (template space), and the managed part of a live file
 * is its block's body, or `null` when it has none. Both go through core's managed-block editor, so
 * damaged markers refuse exactly as in every block domain.
 *
 * Node half: every secret is resolved and every block file read, checked and spliced *before the
 * first write* (a block file's markers come with its request: the node never reads the
 * repository); then each file goes through the controller's `SafeFileWriter` (compare and swap,
 * backup, atomic durable replace), is read back and its sha256 compared; a failure restores what
 * was written. Which paths may be written is the node's own decision (its policy's
 * `domains.files.patterns`), checked by the controller before this runs.
 */
import {
  FleetError,
  assertNoMarkers,
  decodeUtf8,
  findBlock,
  isFleetError,
  normaliseBody,
  resolveSecrets,
  restoreWritten,
  spliceBlock,
  type BlockMarkers,
  type InstallFileRequest,
  type Installer,
  type ManagedFile,
  type NodeContext,
  type NodeInstallRequest,
  type NodeInstallResult,
  type Problem,
  type ReplaceResult,
  type SafeFileWriter,
} from '@fleet/core';
import { filesDomain } from './domain.js';
import { parseFilesManifest } from './manifest.js';

const DOMAIN = filesDomain.domain;
const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

function markersOf(file: Pick<ManagedFile, 'markers' | 'path'>): BlockMarkers {
  if (file.markers === undefined) {
    throw new FleetError('BAD_REQUEST', `${file.path} is a block file without markers`);
  }
  return file.markers;
}

function view(file: ManagedFile, rendered: string): string {
  return file.kind === 'whole' ? rendered : normaliseBody(rendered);
}

function managed(file: ManagedFile, live: string): string | null {
  if (file.kind === 'whole') return live;
  const block = findBlock(live, markersOf(file), file.path);
  return block === null ? null : normaliseBody(block.body);
}

/** A block's source must not itself hold a marker line: the spliced file would not parse back. */
function check(file: ManagedFile, content: string): readonly Problem[] {
  if (file.kind === 'whole') return [];
  try {
    assertNoMarkers(content, markersOf(file), `source ${file.canonical}`);
    return [];
  } catch (error) {
    if (!isFleetError(error)) throw error;
    return error.problems && error.problems.length > 0
      ? error.problems
      : [{ message: error.message }];
  }
}

/** The final bytes of one requested file: the resolved content, or the live file spliced. */
async function finalBytes(
  requested: InstallFileRequest,
  resolved: string,
  writer: SafeFileWriter,
): Promise<Uint8Array> {
  if (requested.markers === undefined) return encode(resolved);
  const { path } = requested;
  const live = await writer.read(path);
  const liveSha = live?.sha256 ?? null;
  if (liveSha !== requested.expectedSha256) {
    throw Object.assign(
      new FleetError(
        'PRECONDITION_FAILED',
        `${path}: live sha256 is ${liveSha ?? 'absent (no such file)'}, not the one planned against; nothing written`,
        { suggestions: ['re-plan against the live file'] },
      ),
      { liveSha256: liveSha, path },
    );
  }
  const text = live === null ? '' : decodeUtf8(live.content, path);
  return encode(spliceBlock(text, resolved, requested.markers, path));
}

async function install(
  ctx: NodeContext,
  request: NodeInstallRequest,
  writer: SafeFileWriter,
): Promise<NodeInstallResult> {
  if (request.domain !== DOMAIN) {
    throw new FleetError(
      'BAD_REQUEST',
      `installer for ${DOMAIN} was asked to install domain ${request.domain}`,
    );
  }
  for (const file of request.files) {
    // A repository-declared file is named by its path (the controller checked the path).
    if (file.fileId !== file.path) {
      throw new FleetError('BAD_REQUEST', `${DOMAIN}: file ${file.fileId} is not ${file.path}`);
    }
  }
  // 1. Secrets, on the node, before anything else: a missing name changes nothing.
  const secrets = await ctx.secrets();
  const resolved = request.files.map((file) => resolveSecrets(file.content, secrets, file.path));
  // 2. Every file's final bytes before the first write: a refusal leaves every file untouched.
  const planned: { path: string; expectedSha256: string | null; content: Uint8Array }[] = [];
  for (const [index, file] of request.files.entries()) {
    const content = await finalBytes(file, resolved[index] as string, writer);
    planned.push({ path: file.path, expectedSha256: file.expectedSha256, content });
  }
  // 3. One operation: compare-and-swap writes, read back; any failure restores what was written.
  const results: ReplaceResult[] = [];
  try {
    for (const replace of planned) results.push(await writer.replace(replace));
    for (const result of results) {
      const live = (await writer.read(result.path))?.sha256 ?? null;
      if (live !== result.afterSha256) {
        throw new FleetError(
          'VERIFICATION_FAILED',
          `${result.path} reads back as ${live ?? 'missing'}, not the ${result.afterSha256} just written`,
        );
      }
    }
  } catch (error) {
    await restoreWritten(writer, results, error);
    throw error;
  }
  return { files: results, actions: [], verified: true };
}

/** The domain's installer, loaded lazily by the registry (`register.ts`). */
export const filesInstaller: Installer = {
  domain: DOMAIN,
  view,
  managed,
  check,
  install,
  repoFiles: parseFilesManifest,
};
