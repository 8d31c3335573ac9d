/**
 * The node identity file (contract §10.2): YAML with `expected_node`, the node id the controller must
 * run as. Parsed the same way by the operator's check, the node half and the prober. Problems name
 * the line, never the text.
 */
import { createRequire } from 'node:module';
import { scanPlaceholders, type Problem } from '@fleet/core/plugin';

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

/**
 * Parses remembered by (file, text), oldest dropped first: the prober reads the same file at every
 * drift (a virtual lab: 1,000 nodes' files in one process), and a parse is a pure function of both.
 */
const parses = new Map<string, IdentityParse>();
const PARSES_KEPT = 1024;
const PARSED_TEXT_KEPT_BYTES = 4096;

/** Reads `expected_node` from an identity file's text (`file` names it in problems). */
export function parseIdentity(text: string, file: string): IdentityParse {
  if (text.length > PARSED_TEXT_KEPT_BYTES) return parseIdentityText(text, file);
  const key = `${file}\u0000${text}`;
  let parsed = parses.get(key);
  if (parsed === undefined) {
    parsed = frozen(parseIdentityText(text, file));
    if (parses.size >= PARSES_KEPT) parses.delete(parses.keys().next().value as string);
    parses.set(key, parsed);
  }
  return parsed;
}

/** A remembered parse is shared by its callers: none may change it. */
function frozen(parsed: IdentityParse): IdentityParse {
  if (!parsed.ok) for (const problem of parsed.problems) Object.freeze(problem);
  if (!parsed.ok) Object.freeze(parsed.problems);
  return Object.freeze(parsed);
}

function parseIdentityText(text: string, file: string): IdentityParse {
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
