/**
 * What `fleet bootstrap receive` (the node's forced SSH command) does for each verb it accepts.
 * The receiver has already checked the verb against the allowlist and logged the request; a
 * handler gets only the context below — never the environment, argv or `SSH_ORIGINAL_COMMAND` —
 * and answers with the process exit code (contract §7). A handler may also throw a fleet error: the
 * command prints it on stderr and exits with its code.
 *
 * A verb of the allowlist without a handler here is refused with exit 2 ("not available in this
 * runtime").
 */
import type { Registry } from '@fleet/core';
import type { RecoveryVerb } from './verbs.js';

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

export type ReceiverHandlers = Readonly<Partial<Record<RecoveryVerb, ReceiverHandler>>>;

/** `{"receiver":"fleet","version":"<cli version>","protocol":<FLEET_PROTOCOL_VERSION>}`. */
export interface ReceiverVersion {
  readonly receiver: 'fleet';
  readonly version: string;
  readonly protocol: number;
}

const version: ReceiverHandler = async (context) => {
  const { FLEET_PROTOCOL_VERSION } = await import('@fleet/core');
  const answer: ReceiverVersion = {
    receiver: 'fleet',
    version: context.version,
    protocol: FLEET_PROTOCOL_VERSION,
  };
  context.stdout.write(`${JSON.stringify(answer)}\n`);
  return 0;
};

export const receiverHandlers: ReceiverHandlers = {
  version,
  // The runtime verbs load the controller's machinery only when asked.
  status: async (context) => (await import('./runtime-handlers.js')).status(context),
  apply: async (context) => (await import('./runtime-handlers.js')).apply(context),
};
