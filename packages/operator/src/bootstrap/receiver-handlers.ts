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
import { FLEET_PROTOCOL_VERSION } from '@fleet/core';
import type { ReceiverHandler } from './receiver-context.js';
import type { RecoveryVerb } from './verbs.js';
import * as runtime from './runtime-handlers.js';

export type { ReceiverAuditRecord, ReceiverContext, ReceiverHandler } from './receiver-context.js';

export type ReceiverHandlers = Readonly<Partial<Record<RecoveryVerb, ReceiverHandler>>>;

/** `{"receiver":"fleet","version":"<cli version>","protocol":<FLEET_PROTOCOL_VERSION>}`. */
export interface ReceiverVersion {
  readonly receiver: 'fleet';
  readonly version: string;
  readonly protocol: number;
}

const version: ReceiverHandler = (context) => {
  const answer: ReceiverVersion = {
    receiver: 'fleet',
    version: context.version,
    protocol: FLEET_PROTOCOL_VERSION,
  };
  context.stdout.write(`${JSON.stringify(answer)}\n`);
  return Promise.resolve(0);
};

export const receiverHandlers: ReceiverHandlers = {
  version,
  status: runtime.status,
  apply: runtime.apply,
};
