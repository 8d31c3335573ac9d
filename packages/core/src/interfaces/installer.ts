import type { Problem } from '../errors.js';
import type { DomainDeclaration, ManagedFile } from './domain.js';
import type { NodeContext } from './node-context.js';

/**
 * The controller's safe write primitive, handed to a domain's node half. One call is the whole
 * recoverable write of principle 7: fingerprint check, dated backup, atomic durable replace.
 * Domains never write managed files any other way.
 */
export interface SafeFileWriter {
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
  /** Operator half: the desired content of `file` from its rendered canonical source. */
  view(file: ManagedFile, renderedCanonical: string, declaration: DomainDeclaration): string;
  /** Operator half: fail-closed checks of desired content (e.g. YAML that does not parse). */
  check?(file: ManagedFile, content: string): readonly Problem[];
  /** Node half: write the files and run the coupled actions; verify before returning. */
  install(
    ctx: NodeContext,
    request: NodeInstallRequest,
    writer: SafeFileWriter,
  ): Promise<NodeInstallResult>;
}
