import type { Problem } from '../errors.js';
import type { DomainDeclaration, ManagedFile } from './domain.js';
import type { NodeContext } from './node-context.js';

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
}

export interface ReplaceResult {
  readonly path: string;
  readonly beforeSha256: string | null;
  readonly afterSha256: string;
  readonly backupPath: string | null;
  /** True when the content equalled the live file: nothing was written. */
  readonly unchanged: boolean;
}

/** One managed file, as the operator asks the node to install it (template space). */
export interface InstallFileRequest {
  readonly fileId: string;
  readonly path: string;
  readonly expectedSha256: string | null;
  /** Desired content with `{{ secret.NAME }}` placeholders still in place. */
  readonly content: string;
}

export interface NodeInstallRequest {
  readonly operationId: string;
  readonly domain: string;
  readonly files: readonly InstallFileRequest[];
  /** Host variables the coupled actions need (a reload command, the node id). */
  readonly parameters: Readonly<Record<string, string>>;
}

export interface ActionOutcome {
  readonly kind: string;
  readonly status: 'ok' | 'skipped' | 'failed' | 'rolled-back';
  readonly detail: string;
}

export interface NodeInstallResult {
  readonly files: readonly ReplaceResult[];
  readonly actions: readonly ActionOutcome[];
  readonly verified: boolean;
}

/**
 * A domain's installer (SPEC §6). The operator half is pure: it derives each file's desired view
 * from its rendered canonical source and refuses content the domain cannot accept. The node half
 * writes the files through the controller's {@link SafeFileWriter} and runs the coupled actions
 * as one operation.
 */
export interface Installer {
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
  /** Node half: write the files and run the coupled actions; verify before returning. */
  install(
    ctx: NodeContext,
    request: NodeInstallRequest,
    writer: SafeFileWriter,
  ): Promise<NodeInstallResult>;
}
