/**
 * A `SafeFileWriter` over a fake host's real temporary home, for testing a domain's node half
 * (`Installer.install`) without a controller. It *is* the controller's writer: every call goes to
 * `@fleet/controller`'s `OperationWriter` (through its `createHomeWriter`), so a plugin test runs
 * the exact code a node runs — the domain's allowlist (only the paths its declaration names, as
 * spelled: `PATH_OUTSIDE_ROOT` otherwise), the per-path lock, compare-and-swap on the live sha256
 * (`PRECONDITION_FAILED` carrying `liveSha256`), no write at all for equal content (`unchanged`:
 * same inode, no backup), a 0600 backup in the 0700 directory `~/.local/state/fleet/backups/
 * <domain>/`, an exclusive temp file beside the target, fsync, rename, directory fsync, the
 * operation's journal; `restore` puts the backed-up bytes back (or removes a file the replace
 * created). Symlinks anywhere on the path are refused (`SYMLINK_REFUSED`) — unless the node policy
 * lists the directory a managed file links into (`symlinkInto`). The node policy is the fake
 * host's (`createFakeHost({ policy })`), else one serving the domain at its declared paths: a
 * per-host path the policy does not list is `POLICY_REFUSED`, as on a node.
 *
 * What it leaves out is the HTTP handler's business, not the domain's: token re-checks, the audit
 * log, the operation record.
 */
import {
  FleetError,
  newOperationId,
  type Clock,
  type DomainDeclaration,
  type NodePolicyInput,
  type ReplaceRequest,
  type ReplaceResult,
  type SafeFileWriter,
} from '@fleet/core';
import { createHomeWriter } from '@fleet/controller';

/** What the writer needs of a domain: its name and the paths it declares. */
export type WriterDomain = Pick<DomainDeclaration, 'domain' | 'files' | 'derivedPaths'> &
  Partial<DomainDeclaration>;

export interface TempHomeWriterOptions {
  /** The operation id the writer works under (a ULID; default: a new one). */
  readonly operationId?: string;
  /** Fault injection: `replace` of this `~/` path throws `IO_ERROR` before writing anything. */
  readonly failReplaceOf?: string;
  /** The clock backups are named by (a fake host passes its `FixedClock`). */
  readonly clock?: Clock;
  /** The node policy (a fake host passes its own; default: serving the domain at its paths). */
  readonly policy?: NodePolicyInput;
  /**
   * The writer every call goes to (default: `@fleet/controller`'s `createHomeWriter`, the code a
   * node runs). A test of the kit itself may hand in another; a plugin test has no reason to.
   */
  readonly createWriter?: HomeWriterFactory;
}

/** What a writer factory is given: the fake host's home, the domain, and what the options set. */
export interface HomeWriterRequest {
  readonly home: string;
  readonly declarations: readonly DomainDeclaration[];
  readonly domain: string;
  readonly operationId: string;
  readonly clock?: Clock;
  readonly policy?: NodePolicyInput;
}

/** Makes the writer a {@link TempHomeWriter} delegates to (default: the controller's own). */
export type HomeWriterFactory = (request: HomeWriterRequest) => Promise<SafeFileWriter>;

/** A {@link @fleet/core#SafeFileWriter} over a temporary home; see the module comment. */
export class TempHomeWriter implements SafeFileWriter {
  /** Every `replace` that returned, in order (what a receipt would list). */
  readonly results: ReplaceResult[] = [];
  /** Every result `restore` was called with, in order. */
  readonly restored: ReplaceResult[] = [];
  /** The operation id the writer's backups and journal are named by. */
  readonly operationId: string;
  private inner: Promise<SafeFileWriter> | undefined;

  constructor(
    /** The absolute home directory (a fake host's `home`). */
    readonly home: string,
    private readonly declaration: WriterDomain,
    private readonly options: TempHomeWriterOptions = {},
  ) {
    this.operationId = options.operationId ?? newOperationId();
  }

  /** `~/`-relative directory of this domain's backups. */
  get backupDir(): string {
    return `~/.local/state/fleet/backups/${this.declaration.domain}`;
  }

  /** The controller's writer, created on first use (state directories, journal `begin`). */
  private writer(): Promise<SafeFileWriter> {
    this.inner ??= (async () => {
      const createWriter = this.options.createWriter ?? createHomeWriter;
      const declaration: DomainDeclaration = {
        description: this.declaration.domain,
        hostVariables: [],
        coupling: { kind: 'none' },
        ...this.declaration,
      };
      return createWriter({
        home: this.home,
        declarations: [declaration],
        domain: declaration.domain,
        operationId: this.operationId,
        ...(this.options.clock ? { clock: this.options.clock } : {}),
        ...(this.options.policy ? { policy: this.options.policy } : {}),
      });
    })();
    return this.inner;
  }

  async read(path: string): Promise<{ content: Uint8Array; sha256: string } | null> {
    return (await this.writer()).read(path);
  }

  async replace(request: ReplaceRequest): Promise<ReplaceResult> {
    const writer = await this.writer();
    if (request.path === this.options.failReplaceOf) {
      throw new FleetError('IO_ERROR', `${request.path}: injected failure (testkit)`);
    }
    const result = await writer.replace(request);
    this.results.push(result);
    return result;
  }

  async restore(result: ReplaceResult): Promise<void> {
    this.restored.push(result);
    await (await this.writer()).restore(result);
  }
}
