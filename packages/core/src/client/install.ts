/**
 * Sending an install with the optional fields of protocol 2 (contract §5.2): `repoCommit`, the
 * fleet repository commit its content was rendered from, which the node writes into the receipt
 * and the operation's audit record (contract §8.4, issue 36); and `toolOutput`, which asks for a
 * refused action's output tail in the answer (issue 40). Objects are strict, so a node that
 * predates a field refuses its key; a refusal of exactly those keys is answered by sending the
 * same request — same operation id: the refusal came from the body's schema, before the node
 * claimed the id — without them. The operator's own log still names the commit; the node's
 * records then do not, and a refusal then shows no tool output.
 */
import { isFleetError } from '../errors.js';
import type { Receipt } from '../wire/receipt.js';
import type { InstallRequest } from '../wire/schemas.js';
import type { ControllerClient } from './client.js';

/** The install request's optional additions within protocol 2, dropped for a node that predates them. */
const OPTIONAL_KEYS = ['repoCommit', 'toolOutput'] as const;
type OptionalKey = (typeof OPTIONAL_KEYS)[number];

/**
 * Which of the optional keys a node refused as unknown: `BAD_REQUEST` from its body schema, naming
 * each (`Unrecognized key: "repoCommit"`, `Unrecognized keys: "repoCommit", "toolOutput"`). A node
 * that knows a key and refuses its value says something else, and is not asked again.
 */
export function refusedOptionalKeys(error: unknown): OptionalKey[] {
  if (!isFleetError(error) || error.code !== 'BAD_REQUEST') return [];
  if (!/unrecognized key/i.test(error.message)) return [];
  return OPTIONAL_KEYS.filter((key) => new RegExp(`"${key}"`).test(error.message));
}

/** Whether a node refused an install only because it predates `repoCommit` (see above). */
export function refusedRepoCommitKey(error: unknown): boolean {
  return refusedOptionalKeys(error).includes('repoCommit');
}

/** What {@link installThrough} got: the receipt, and whether the node was sent the commit. */
export interface InstallSent {
  /** The node's receipt (`repoCommit` in it only when the node was sent one). */
  readonly receipt: Receipt;
  /** False when the node predates `repoCommit` and the request went again without it. */
  readonly commitSent: boolean;
}

/**
 * Sends `request` (with its operation id) and, each time the node refuses only optional keys it
 * predates, the same request again without them. Any other failure is thrown as it came.
 */
export async function installThrough(
  client: Pick<ControllerClient, 'install'>,
  request: InstallRequest,
): Promise<InstallSent> {
  let sent: InstallRequest = request;
  for (;;) {
    try {
      return { receipt: await client.install(sent), commitSent: sent.repoCommit !== undefined };
    } catch (error) {
      const refused = refusedOptionalKeys(error).filter((key) => sent[key] !== undefined);
      if (refused.length === 0) throw error;
      const without: Record<string, unknown> = { ...sent };
      for (const key of refused) delete without[key];
      sent = without as InstallRequest;
    }
  }
}
