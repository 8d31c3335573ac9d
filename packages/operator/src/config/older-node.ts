/**
 * What an older node can answer of a snapshot request, decided from its own refusal (contract
 * §5.2: objects are strict, so a node that predates an optional field refuses it as an
 * unrecognized key, `BAD_REQUEST` from the body's schema, before any handler runs). Two fields of
 * `POST /v1/snapshot` are asked again without: `runtime` (drift then reads the summary apart) and a
 * byte-exact source's `bytes` (contract §10.4) — each such entry is then answered `NODE_OUTDATED`
 * by the operator, and every other entry of the host is still read. Any other refusal, or one that
 * names another key too, stands: nothing is retried blindly. Pure; the transport is live.ts.
 */
import { isFleetError } from '@fleet/core';
import type { LiveFile, SnapshotRequest } from '@fleet/core';

/** A key a node refused as unrecognized, and where in the body (`(body)`, `files.3`). */
export interface RefusedKey {
  readonly where: string;
  readonly key: string;
}

/** How the controller words a body its schema refuses (controller/src/http/request.ts). */
const SCHEMA_REFUSAL = 'the request body does not match the schema: ';

/**
 * The keys a node's `BAD_REQUEST` names as unrecognized — `null` unless every issue it lists is
 * such a key (a node that knows a key and refuses its value says something else).
 */
export function unrecognizedKeysOf(error: unknown): RefusedKey[] | null {
  if (!isFleetError(error) || error.code !== 'BAD_REQUEST') return null;
  const at = error.message.indexOf(SCHEMA_REFUSAL);
  if (at < 0) return null;
  const refused: RefusedKey[] = [];
  for (const issue of error.message.slice(at + SCHEMA_REFUSAL.length).split('; ')) {
    const match = /^(\S+): Unrecognized keys?: ("[^"]+"(?:, "[^"]+")*)$/.exec(issue);
    if (match === null) return null;
    const [, where = '', keys = ''] = match;
    for (const [, key = ''] of keys.matchAll(/"([^"]+)"/g)) refused.push({ where, key });
  }
  return refused.length === 0 ? null : refused;
}

/** The request again without what an older node refused, and what was left out. */
export interface OlderNodeRequest {
  readonly request: SnapshotRequest;
  /** `runtime` was refused: the summary is read apart. */
  readonly withoutRuntime: boolean;
  /** `bytes` was refused: every byte-exact entry is answered `NODE_OUTDATED`. */
  readonly withoutBytes: boolean;
}

/**
 * The request an older node can answer, given its refusal of `request`: `null` when the refusal
 * names anything but `runtime` on the body or `bytes` on an entry that asked for it. A node that
 * predates `bytes` predates it for every entry, so all of them go without it (the refusal lists
 * at most three issues). The entries stay in the request (the node still checks its policy for
 * each) and are answered by {@link outdatedEntries}.
 */
export function olderNodeRequest(
  request: SnapshotRequest,
  error: unknown,
): OlderNodeRequest | null {
  const refused = unrecognizedKeysOf(error);
  if (refused === null) return null;
  let withoutRuntime = false;
  let withoutBytes = false;
  for (const { where, key } of refused) {
    const entry = /^files\.(\d+)$/.exec(where);
    if (where === '(body)' && key === 'runtime' && request.runtime === true) withoutRuntime = true;
    else if (key === 'bytes' && entry !== null && request.files[Number(entry[1])]?.bytes === true)
      withoutBytes = true;
    else return null;
  }
  const { runtime: _runtime, ...rest } = request;
  return {
    request: {
      ...(withoutRuntime ? rest : request),
      files: withoutBytes
        ? request.files.map(({ bytes: _bytes, ...file }) => file)
        : [...request.files],
    },
    withoutRuntime,
    withoutBytes,
  };
}

/** What a byte-exact entry of a node that predates `bytes` is: not checked, and why. */
export const OUTDATED_BYTES: LiveFile = {
  kind: 'refused',
  code: 'NODE_OUTDATED',
  message:
    'the node runtime predates byte-exact sources (the snapshot field `bytes`): this entry cannot be checked or installed there; upgrade it with `fleet upgrade`',
};

/** The paths of `request`'s byte-exact entries: what an older node's answer is replaced for. */
export function outdatedEntries(request: SnapshotRequest): string[] {
  return request.files.filter((file) => file.bytes === true).map((file) => file.path);
}
