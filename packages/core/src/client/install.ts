/**
 * Sending an install that names its commit (contract §8.4, issue 36): the request carries
 * `repoCommit`, the fleet repository commit its content was rendered from, and the node writes it
 * into the receipt and the operation's audit record. The field is an optional addition within
 * protocol 2 (contract §5.2: objects are strict, so a node that predates it refuses the key), so a
 * refusal of exactly that key is answered by sending the same request — same operation id: the
 * refusal came from the body's schema, before the node claimed the id — without it. The operator's
 * own log still names the commit; the node's records then do not.
 */
import { isFleetError } from '../errors.js';
import type { Receipt } from '../wire/receipt.js';
import type { InstallRequest } from '../wire/schemas.js';
import type { ControllerClient } from './client.js';

/**
 * Whether a node refused an install only because it predates `repoCommit`: `BAD_REQUEST` from its
 * body schema, naming the key as unrecognised (`Unrecognized key: "repoCommit"`). A node that knows
 * the key and refuses its value says something else, and is not asked again.
 */
export function refusedRepoCommitKey(error: unknown): boolean {
  return (
    isFleetError(error) &&
    error.code === 'BAD_REQUEST' &&
    /\brepoCommit\b/.test(error.message) &&
    /unrecognized key/i.test(error.message)
  );
}

/** What {@link installThrough} got: the receipt, and whether the node was sent the commit. */
export interface InstallSent {
  /** The node's receipt (`repoCommit` in it only when the node was sent one). */
  readonly receipt: Receipt;
  /** False when the node predates `repoCommit` and the request went again without it. */
  readonly commitSent: boolean;
}

/**
 * Sends `request` (with its operation id) and, when the node refuses only its `repoCommit`, the
 * same request again without it. Any other failure is thrown as it came.
 */
export async function installThrough(
  client: Pick<ControllerClient, 'install'>,
  request: InstallRequest,
): Promise<InstallSent> {
  try {
    return { receipt: await client.install(request), commitSent: request.repoCommit !== undefined };
  } catch (error) {
    if (request.repoCommit === undefined || !refusedRepoCommitKey(error)) throw error;
  }
  const { repoCommit: _unsent, ...without } = request;
  return { receipt: await client.install(without), commitSent: false };
}
