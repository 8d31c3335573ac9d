/**
 * The node identity file (contract §10.2): YAML with `expected_node`, the node id the controller must
 * run as. Parsed the same way by the operator's check, the node half and the prober. Problems name
 * the line, never the text.
 */
import { createRequire } from 'node:module';
import { scanPlaceholders, type Problem } from '@fleet/core';

type YamlLibrary = typeof import('yaml');
let yamlModule: YamlLibrary | undefined;
/** yaml, loaded when a file is first parsed: a verb that parses none never loads it (contract §14). */
const yaml = (): YamlLibrary =>
  (yamlModule ??= createRequire(import.meta.url)('yaml') as YamlLibrary);

/** A node id: what the controller's `--node-id` and the lab supervisor accept. */
export const NODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isNodeId(value: unknown): value is string {
  return typeof value === 'string' && NODE_ID_PATTERN.test(value);
}

export type IdentityParse =
  | { readonly ok: true; readonly expectedNode: string }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Reads `expected_node` from an identity file's text (`file` names it in problems). */
export function parseIdentity(text: string, file: string): IdentityParse {
  const fail = (message: string, line?: number): IdentityParse => ({
    ok: false,
    problems: [{ file, ...(line === undefined ? {} : { line }), message }],
  });
  const secret = scanPlaceholders(text).placeholders.find((ph) => ph.namespace === 'secret');
  if (secret) return fail('the identity file must not use secrets', secret.line);
  const { LineCounter, isMap, isScalar, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    uniqueKeys: true,
    strict: true,
    prettyErrors: false,
  });
  const [error] = [...doc.errors, ...doc.warnings];
  if (error) return fail(`not valid YAML (${error.code})`, lineCounter.linePos(error.pos[0]).line);
  if (!isMap(doc.contents)) return fail('must be a YAML mapping with expected_node');
  const pair = doc.contents.items.find(
    (item) => isScalar(item.key) && item.key.value === 'expected_node',
  );
  if (!pair) return fail('has no expected_node');
  const line =
    isScalar(pair.key) && pair.key.range ? lineCounter.linePos(pair.key.range[0]).line : undefined;
  const value = isScalar(pair.value) ? pair.value.value : undefined;
  if (!isNodeId(value)) {
    return fail(
      'expected_node must be a node id (letters, digits, ".", "_", "-"; at most 128 characters)',
      line,
    );
  }
  return { ok: true, expectedNode: value };
}
