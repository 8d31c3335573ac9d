import type { Problem } from '../errors.js';
import type { ActionOutcome } from './action-outcome.js';
import type { BlockMarkers, DomainDeclaration, ManagedFile } from './domain.js';
import type { NodeContext } from './node-context.js';

export type { ActionOutcome } from './action-outcome.js';

/**
 * The controller's safe write primitive, handed to a domain's node half. One call is the whole
 * recoverable write of principle 7: fingerprint check, dated backup, atomic durable replace.
 * Domains never write managed files any other way.
 */
export interface SafeFileWriter {
  /**
   * The live bytes of an allowlisted file and their sha256, read through the same path checks as
   * a write (no symlinks, nothing outside the home); `null` when it does not exist. A block
   * installer splices its block into these bytes.
   */
  read(path: string): Promise<{ readonly content: Uint8Array; readonly sha256: string } | null>;
  /** The recoverable write: compare-and-swap, backup, atomic durable replace. */
  replace(request: ReplaceRequest): Promise<ReplaceResult>;
  /** Puts back what a `replace` replaced (from its backup), or removes a file it created. */
  restore(result: ReplaceResult): Promise<void>;
}

export interface ReplaceRequest {
  /** `~/`-relative path on the allowlist. */
  readonly path: string;
  /** sha256 the operator planned against; `null` when the file must not exist yet. */
  readonly expectedSha256: string | null;
  /** Final bytes (secrets already resolved on the node). */
  readonly content: Uint8Array;
  /**
   * The permission bits to write the file with (a valid `file-mode.ts` mode). Absent: a replaced
   * file keeps its mode, a new one is 0600. A file whose content is equal but whose mode differs
   * is replaced (backup, temp file with the mode, rename): one path for every change. Ignored on
   * Windows.
   */
  readonly mode?: number;
  /**
   * Runs on the staged new content before it replaces the live file, with the staged file's
   * absolute path (the temp file in the target's own directory, written, fsync'd, with its final
   * mode): a domain's validate action (docs/plugin-authoring.md §7). A throw replaces nothing —
   * the staged file and the backup are removed, the live file is untouched — and is the replace's
   * error. Not called for an unchanged file, which writes nothing.
   */
  readonly beforeRename?: (stagedPath: string) => Promise<void>;
}

/** What one `replace` did: enough for a receipt and for `restore`. */
export interface ReplaceResult {
  /** The `~/` path written. */
  readonly path: string;
  /** sha256 of the bytes replaced; `null` when the file was created. */
  readonly beforeSha256: string | null;
  /** sha256 of the bytes now in place. */
  readonly afterSha256: string;
  /** `~/` path of the backup of the old bytes; `null` when created or unchanged. */
  readonly backupPath: string | null;
  /** True when the content equalled the live file: nothing was written. */
  readonly unchanged: boolean;
}

/** One managed file, as the operator asks the node to install it (template space). */
export interface InstallFileRequest {
  /** The managed file's `id` in the domain's declaration. */
  readonly fileId: string;
  /** Its `~/` path on this node (the declared one, or an override the node policy lists). */
  readonly path: string;
  /** sha256 of the live file the operator planned against; `null`: it must not exist. */
  readonly expectedSha256: string | null;
  /** Desired content with `{{ secret.NAME }}` placeholders still in place. */
  readonly content: string;
  /**
   * For a `block` file of a domain whose files are declared in the repository (contract §10.4):
   * the lines delimiting its block. Absent for every other file (the node knows its markers).
   */
  readonly markers?: BlockMarkers;
  /** A repository-declared file's mode (`"0600"`, contract §10.4); see {@link ManagedFile.mode}. */
  readonly mode?: string;
  /**
   * A repository-declared file's coupled action: a node policy action id (contract §10.4), checked
   * by the controller against the domain's policy before anything is written.
   */
  readonly action?: string;
  /**
   * `false`: a repository-declared file that is not a template (contract §10.4): its content is
   * written as it is, and no `{{ secret.NAME }}` in it is resolved.
   */
  readonly template?: false;
  /**
   * `base64`: a repository-declared whole file whose source is not UTF-8 text (contract §10.4):
   * `content` is its bytes in base64, written byte for byte — never rendered, no secret resolved.
   */
  readonly encoding?: 'base64';
}

/** What the controller hands a domain's node half: one install operation. */
export interface NodeInstallRequest {
  /** The operation's id (a ULID), shared by the receipt and the audit record. */
  readonly operationId: string;
  /** The domain to install. */
  readonly domain: string;
  /** The files to install, in template space. */
  readonly files: readonly InstallFileRequest[];
  /** Host variables the coupled actions need (the node id, a derived path for this host). */
  readonly parameters: Readonly<Record<string, string>>;
  /**
   * The node policy actions the install asks for, by the role the domain gives them (the router's
   * `reload`): ids, never an argv. The controller has already refused (`POLICY_REFUSED`) any id
   * the domain's policy does not define; run them through `ctx.actions`.
   */
  readonly actions?: Readonly<Record<string, string>>;
}

/**
 * A coupled action that replaces the controller answering the install (a restart with a new
 * `--node-id`): it cannot be awaited in-process. The controller journals the operation with
 * `expect`, answers `restart pending` (the receipt's pending actions, `verified: false`), then
 * calls `start` once the answer is sent. The next controller settles the operation at its start:
 * when it runs as `expect` says, the operation is completed and verified; otherwise every file the
 * operation wrote is restored from its backup and the operation is reported rolled back.
 */
export interface PendingRestart {
  /** What the restarted controller must observe in itself: the `--node-id` it runs with. */
  readonly expect: { readonly nodeId: string };
  /** One line for the receipt and the audit record (`restart pending: … → …`). */
  readonly detail: string;
  /** Starts the restart from outside this process (e.g. a detached helper); must not wait for it. */
  start(): void | Promise<void>;
}

/** What a node half reports back: the receipt is built from it. */
export interface NodeInstallResult {
  /** Every `replace` result, in order. */
  readonly files: readonly ReplaceResult[];
  /** Every coupled action's outcome, in order (`[]` for `coupling: none`). */
  readonly actions: readonly ActionOutcome[];
  /** True only when every file (and action) was checked after the write. */
  readonly verified: boolean;
  /** Set when the outcome is settled by the restarted controller, after the answer. */
  readonly pending?: PendingRestart;
}

/**
 * A domain's installer (contract §6). The operator half is pure: it derives each file's desired view
 * from its rendered canonical source and refuses content the domain cannot accept. The node half
 * writes the files through the controller's {@link SafeFileWriter} and runs the coupled actions
 * as one operation.
 */
export interface Installer {
  /** The domain it installs (checked against its descriptor when loaded). */
  readonly domain: string;
  /**
   * Operator half: the desired managed content of `file` from its rendered canonical source — the
   * whole file for `whole` files, the block's body for `block` files.
   */
  view(file: ManagedFile, renderedCanonical: string, declaration: DomainDeclaration): string;
  /**
   * Operator half: the managed part of a live file's (redacted) content, comparable with `view`:
   * the content itself for `whole` files; for `block` files the block's body, or `null` when the
   * file has no block. Damaged markers throw (`MARKERS_*`): such a file is never written.
   */
  managed(file: ManagedFile, live: string): string | null;
  /** Operator half: fail-closed checks of desired content (e.g. YAML that does not parse). */
  check?(file: ManagedFile, content: string): readonly Problem[];
  /**
   * Operator half, for a domain with a `repoManifest`: the files the manifest's text declares, and
   * the host variables their templates may use (`source` names the manifest in problems). Throws a
   * `FleetError` with file/line/field problems when it does not validate. The core checks what it
   * returns like any declaration.
   */
  repoFiles?(
    manifest: string,
    source: string,
  ): { readonly files: readonly ManagedFile[]; readonly hostVariables: readonly string[] };
  /** Node half: write the files and run the coupled actions; verify before returning. */
  install(
    ctx: NodeContext,
    request: NodeInstallRequest,
    writer: SafeFileWriter,
  ): Promise<NodeInstallResult>;
}
