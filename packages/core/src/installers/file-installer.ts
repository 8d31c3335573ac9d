/**
 * The reusable installer for domains whose files are written and nothing else (`coupling: none`,
 * contract §6): `whole` files equal their rendered source, `block` files hold it between their
 * markers while every other byte stays the host user's (core's managed-block editor, `block.ts`).
 * The files domain, the gitconfig example and every plugin `fleet plugins new` writes are this
 * installer plus, at most, a syntax check of their own (docs/plugin-authoring.md).
 *
 * Operator half (pure): the view of a block file is its rendered source as the block's body; the
 * managed part of a live file is its block's body, or `null` when it has none; `check` refuses a
 * body holding a marker line, then runs the domain's own check.
 *
 * Node half: secrets resolved, every body checked again (resolved), every block file read, its
 * sha256 compared with the planned one and the block spliced in — all *before the first write*,
 * so a refusal leaves every file untouched; then {@link writeVerified} (compare and swap, backup,
 * atomic durable replace, read back, restore on failure). Which paths may be written is the
 * node's own decision, checked by the controller before this runs (contract §5.1).
 *
 * A repository-declared file may carry a mode and an action (contract §10.4): a whole file is
 * written with its mode, a block file only when the install creates it; a changed file's action
 * runs after every write, through the node policy (`file-actions.ts`). The request's role actions
 * (`validate` on each staged file before its rename, `reload` and `restart` after the writes) run
 * through the same path, for declared and repository-declared files alike.
 */
import { FleetError, PreconditionFailedError, isFleetError, type Problem } from '../errors.js';
import type { BlockMarkers, ManagedFile } from '../interfaces/domain.js';
import type {
  InstallFileRequest,
  Installer,
  NodeInstallRequest,
  NodeInstallResult,
  SafeFileWriter,
} from '../interfaces/installer.js';
import type { NodeContext } from '../interfaces/node-context.js';
import { resolveSecrets } from '../secrets/env-chain.js';
import { parseFileMode } from '../file-mode.js';
import { defaultFileMode } from '../classify/attributes.js';
import { assertNoMarkers, decodeUtf8, findBlock, normaliseBody, spliceBlock } from './block.js';
import {
  requireFileActions,
  requireValidated,
  runFileActions,
  withValidation,
} from './file-actions.js';
import { requireDistinctFiles, requireDomain } from './request-guards.js';
import { writeVerified, type PlannedWrite } from './transaction.js';

/** The parts of a managed file a body check may look at. */
export type CheckedFile = Pick<ManagedFile, 'id' | 'path' | 'kind' | 'canonical'>;

export interface FileInstallerOptions {
  /** The domain it installs. */
  readonly domain: string;
  /**
   * The files the domain declares (the node half accepts only these ids, and takes a block file's
   * markers from here). Omit for a domain whose files are declared in the repository
   * (`repoManifest`): a file is then named by its path and a block's markers come with the request.
   */
  readonly files?: readonly ManagedFile[];
  /**
   * The domain's own fail-closed checks of a body (a block's body, a whole file's content): in
   * template space on the operator side, with secrets resolved on the node. Problems name lines,
   * never text (a resolved body may hold a secret).
   */
  readonly check?: (file: CheckedFile, body: string, source: string) => readonly Problem[];
  /** For a domain with a `repoManifest`: parses the manifest (see {@link Installer.repoFiles}). */
  readonly repoFiles?: Installer['repoFiles'];
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

function problemsOf(error: unknown): readonly Problem[] {
  if (!isFleetError(error)) throw error;
  return error.problems && error.problems.length > 0
    ? error.problems
    : [{ message: error.message }];
}

/** A block file's markers: one without them is a bad request. */
function markersOf(domain: string, file: Pick<ManagedFile, 'markers' | 'path'>): BlockMarkers {
  if (file.markers === undefined) {
    throw new FleetError('BAD_REQUEST', `${domain}: ${file.path} is a block file without markers`);
  }
  return file.markers;
}

/** What is wrong with a body: markers inside a block's body, then the domain's own check. */
function bodyProblems(
  options: FileInstallerOptions,
  file: ManagedFile,
  body: string,
  source: string,
): readonly Problem[] {
  if (file.kind === 'block') {
    try {
      assertNoMarkers(body, markersOf(options.domain, file), source);
    } catch (error) {
      return problemsOf(error);
    }
  }
  return options.check?.(file, body, source) ?? [];
}

/** The declared file a request names, with the markers its request carries (repo-declared). */
function fileOf(options: FileInstallerOptions, requested: InstallFileRequest): ManagedFile {
  const { domain } = options;
  if (options.files === undefined) {
    // A repository-declared file is named by its path (the controller checked the path).
    if (requested.fileId !== requested.path) {
      throw new FleetError(
        'BAD_REQUEST',
        `${domain}: file ${requested.fileId} is not ${requested.path}`,
      );
    }
    return {
      id: requested.path,
      path: requested.path,
      canonical: requested.path,
      kind: requested.markers === undefined ? 'whole' : 'block',
      format: 'text',
      ...(requested.markers === undefined ? {} : { markers: requested.markers }),
    };
  }
  if (
    requested.mode !== undefined ||
    requested.action !== undefined ||
    requested.template !== undefined ||
    requested.encoding !== undefined
  ) {
    throw new FleetError(
      'BAD_REQUEST',
      `${domain}: ${requested.path} is a declared file; its mode and actions are the domain's`,
    );
  }
  const file = options.files.find((f) => f.id === requested.fileId);
  if (file === undefined) {
    throw new FleetError(
      'BAD_REQUEST',
      `${domain} declares no file ${JSON.stringify(requested.fileId)}`,
    );
  }
  return { ...file, path: requested.path };
}

/** The final bytes of one file: its resolved content, or the live file with the block spliced. */
async function planned(
  options: FileInstallerOptions,
  requested: InstallFileRequest,
  resolved: string,
  writer: SafeFileWriter,
): Promise<PlannedWrite> {
  const file = fileOf(options, requested);
  const { path, expectedSha256 } = requested;
  if (requested.encoding === 'base64') return bytesWrite(options.domain, requested, file);
  const problems = bodyProblems(
    options,
    file,
    file.kind === 'block' ? normaliseBody(resolved) : resolved,
    path,
  );
  if (problems.length > 0) {
    const first = problems[0];
    throw new FleetError(
      'RENDER_FAILED',
      `${path} cannot be written: ${first?.line ? `line ${first.line}: ` : ''}${first?.message ?? ''}${
        problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''
      }; nothing written`,
      { problems },
    );
  }
  const declared = requested.mode === undefined ? undefined : parseFileMode(requested.mode);
  // A repository-declared file without a mode that fleet creates gets the default (contract
  // §10.4): 0644, or 0600 when it renders a secret (the request's text had a placeholder).
  const created = (exists: boolean) =>
    options.files !== undefined || exists
      ? null
      : defaultFileMode(resolved !== requested.content, false);
  if (file.kind === 'whole') {
    const fallback = created(expectedSha256 !== null);
    const mode = declared ?? (fallback === null ? undefined : parseFileMode(fallback));
    return {
      path,
      expectedSha256,
      content: encode(resolved),
      ...(mode === undefined ? {} : { mode }),
    };
  }
  // A block file is the host user's: its mode is set only when fleet creates it (§10.4).
  let exists = true;
  const content = await splicedLive(
    { path, expectedSha256, body: resolved, markers: markersOf(options.domain, file) },
    async (p) => {
      const live = await writer.read(p);
      exists = live !== null;
      return live;
    },
  );
  const fallback = created(exists);
  const mode = exists
    ? undefined
    : (declared ?? (fallback === null ? undefined : parseFileMode(fallback)));
  return { path, expectedSha256, content, ...(mode === undefined ? {} : { mode }) };
}

/**
 * A whole file whose source is not UTF-8 text (`encoding: base64`, contract §10.4): its bytes as
 * they are — no body check (the domain's checks read text), no secret resolved.
 */
function bytesWrite(
  domain: string,
  requested: InstallFileRequest,
  file: ManagedFile,
): PlannedWrite {
  if (file.kind !== 'whole') {
    throw new FleetError(
      'BAD_REQUEST',
      `${domain}: ${requested.path} is a block file: its body is text, never base64`,
    );
  }
  const { path, expectedSha256 } = requested;
  const declared = requested.mode === undefined ? undefined : parseFileMode(requested.mode);
  const fallback = expectedSha256 === null ? defaultFileMode(false, false) : null;
  const mode = declared ?? (fallback === null ? undefined : parseFileMode(fallback));
  return {
    path,
    expectedSha256,
    content: Uint8Array.from(Buffer.from(requested.content, 'base64')),
    ...(mode === undefined ? {} : { mode }),
  };
}

/**
 * An {@link Installer} for `whole` and `block` files, running the coupled actions the request names
 * by role and each repository-declared file's own (docs/plugin-authoring.md §7).
 */
export function fileInstaller(options: FileInstallerOptions): Installer {
  const { domain } = options;

  async function install(
    ctx: NodeContext,
    request: NodeInstallRequest,
    writer: SafeFileWriter,
  ): Promise<NodeInstallResult> {
    requireDomain(request, domain);
    requireDistinctFiles(request, domain);
    // 1. Every action is the node policy's, and secrets resolve: else nothing is written.
    const roles = request.actions ?? {};
    requireFileActions(ctx, domain, request.files, roles);
    const secrets = await ctx.secrets();
    // A file that is not a template (`template: false`, §10.4) is written as it is.
    const resolved = request.files.map((file) =>
      file.template === false || file.encoding !== undefined
        ? file.content
        : resolveSecrets(file.content, secrets, file.path),
    );
    // 2. Every file's final bytes before the first write: a refusal leaves every file untouched.
    const writes: PlannedWrite[] = [];
    for (const [index, file] of request.files.entries()) {
      writes.push(await planned(options, file, resolved[index] as string, writer));
    }
    // 3. One operation: compare-and-swap writes, each staged file validated before its rename,
    // read back; any failure restores what was written.
    const validation = withValidation(ctx, roles, writes);
    const results = await writeVerified(writer, validation.writes);
    await requireValidated(roles, results, validation.checked, writer);
    // 4. The changed files' actions, then reload and restart; one that fails restores every file.
    const actions = await runFileActions(
      ctx,
      request.files,
      results,
      writer,
      roles,
      validation.outcomes,
    );
    return { files: results, actions, verified: true };
  }

  return {
    domain,
    view: (file, rendered) =>
      file.kind === 'block' ? normaliseBody(rendered.replace(/^\ufeff/, '')) : rendered,
    managed(file, live) {
      if (file.kind !== 'block') return live;
      const block = findBlock(live, markersOf(domain, file), file.path);
      return block === null ? null : normaliseBody(block.body);
    },
    check: (file, content) =>
      bodyProblems(options, file, content, `domains/${domain}/${file.canonical}`),
    install,
    ...(options.repoFiles === undefined ? {} : { repoFiles: options.repoFiles }),
  };
}

/** One block file of a node operation: where, what the live file must be, the resolved body. */
export interface BlockWrite {
  readonly path: string;
  /** The sha256 the operator planned against (`null`: no file yet). */
  readonly expectedSha256: string | null;
  /** The block's body, secrets resolved. */
  readonly body: string;
  readonly markers: BlockMarkers;
}

/**
 * The final bytes of a block file (node half, before any write): the live file read through the
 * controller's checked read, compared with the planned sha256 (`PRECONDITION_FAILED`, nothing
 * written), the block spliced in with every other byte kept, and the result read back as that
 * block — what is written must parse back to the body just spliced in.
 */
export async function splicedLive(
  write: BlockWrite,
  read: SafeFileWriter['read'],
): Promise<Uint8Array> {
  const { path, expectedSha256, body, markers } = write;
  const live = await read(path);
  const liveSha = live?.sha256 ?? null;
  if (liveSha !== expectedSha256) {
    throw new PreconditionFailedError(path, liveSha);
  }
  const text = live === null ? '' : decodeUtf8(live.content, path);
  const spliced = spliceBlock(text, body, markers, path);
  const back = findBlock(spliced, markers, path);
  if (back === null || normaliseBody(back.body) !== normaliseBody(body)) {
    throw new FleetError('INTERNAL', `${path}: the spliced file does not read back as its block`);
  }
  return encode(spliced);
}
