/**
 * The shapes around the controller's writer (`OperationWriter`, writer.ts): what it is given
 * (`WriterOptions`, with the `SecretHolder`s its `retain` hook is told of) and what it keeps of
 * each `replace` (`WrittenFile`, what a receipt and a restore need). Apart from the class so that
 * the handlers that only read a receipt's files need not import the writer.
 */
import type { Clock, ReplaceResult } from '@fleet/core/node';
import type { Allowlist } from './allowlist.js';
import type { PathLocks } from './locks.js';
import type { OperationStore } from './operations.js';
import type { StatePaths } from './state-paths.js';

export interface WriterOptions {
  readonly home: string;
  readonly state: StatePaths;
  readonly operationId: string;
  readonly domain: string;
  readonly allowlist: Allowlist;
  readonly locks: PathLocks;
  readonly operations: OperationStore;
  readonly clock: Clock;
  readonly fileLimit: number;
  /** Runs right before each rename: re-checks the caller's token (`AUTH_REVOKED` aborts). */
  readonly beforeCommit: () => Promise<void>;
  /**
   * Runs once the backup is on disk and before the new content is: the node's secret memory
   * records which values the new content and the backup hold (docs/secrets.md), durably, so a
   * crash after the rename cannot leave a value on disk the memory does not know of.
   */
  readonly retain?: (holders: readonly SecretHolder[]) => Promise<void>;
}

/** A file that may hold resolved secret values: a live file's new content, or a backup. */
export interface SecretHolder {
  /** Its `~/` path. */
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** One `replace` this writer did, with what a receipt and a restore need. */
export interface WrittenFile {
  readonly fileId: string;
  readonly result: ReplaceResult;
  readonly before: Buffer | null;
  readonly after: Uint8Array;
  /** The replaced file's mode (what a restore puts back); 0600 for a created file. */
  readonly mode: number;
  /** The mode change a request asked for (`request.mode`): the receipt and audit record say it. */
  readonly modeChange?: { readonly before: number | null; readonly after: number };
  /** The replaced file had other hard links: they keep the old content (catalogue 16). */
  readonly hardlinkBroken: boolean;
  restored: boolean;
}
