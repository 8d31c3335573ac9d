/**
 * What the recovery receiver hands each verb's handler (receiver-handlers.ts dispatches, the
 * runtime verbs live in runtime-handlers.ts): its own module so that the handlers name it
 * without importing the dispatcher that loads them.
 */
import type { Registry } from '@fleet/core';

export interface ReceiverContext {
  /** The node's home (`--home`): every path a handler touches is under it. */
  readonly home: string;
  /** The version of the fleet CLI package running the receiver. */
  readonly version: string;
  /**
   * The request body: the SSH channel's stdin, raw bytes. `version` and `status` ignore it;
   * for `apply` it is a bundle (`readBundle` in ./bundle.ts).
   */
  readonly stdin: NodeJS.ReadableStream;
  /** The answer, read by the operator side (`runRecoveryVerb`): JSON for every verb. */
  readonly stdout: NodeJS.WritableStream;
  /** Human diagnostics; the operator side shows them. */
  readonly stderr: NodeJS.WritableStream;
  /**
   * Loads the plugin registry (fires `fleet:register`). Only handlers that need domain code
   * (adapters, probers) call it: `version` stays fast.
   */
  readonly loadRegistry: () => Promise<Registry>;
  /** Appends one line to the receiver log (`<home>/.local/state/fleet/receiver.log`, 0600). */
  readonly log: (message: string) => Promise<void>;
  /**
   * Appends one record, durably, to the node's hash-chained audit log — the controller's log and
   * chain (docs/audit-log.md, "Writers") — under this request's operation id and the caller's
   * name (`ssh:<key fingerprint>`). `AUDIT_UNAVAILABLE` when it cannot: the handler undoes what
   * the record was for.
   */
  readonly audit: (record: ReceiverAuditRecord) => Promise<void>;
}

/** What a handler says of an operation; the receiver adds the operation id and the caller. */
export interface ReceiverAuditRecord {
  /** `runtime-stage`, `runtime-activate` (the names the controller's routes record). */
  readonly operation: string;
  readonly outcome: 'ok' | 'failed' | 'denied';
  readonly code: string | null;
  readonly detail: string;
}

/** One verb's implementation; resolves to the exit code of the receiver process. */
export type ReceiverHandler = (context: ReceiverContext) => Promise<number>;
