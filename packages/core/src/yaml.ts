/**
 * YAML parsing that keeps positions, so every problem can name its line. Duplicate keys, aliases
 * beyond a small bound and non-core tags are errors (fail closed), never silently resolved.
 */
import { createRequire } from 'node:module';
import type { Document } from 'yaml';
import { FleetError, type ErrorCode, type Problem } from './errors.js';

type YamlLibrary = typeof import('yaml');
let yamlModule: YamlLibrary | undefined;

/**
 * The yaml library, loaded on first use (its CommonJS build, synchronously): over seventy modules
 * that a verb answering from `.git/fleet-cache` never needs (contract §14, "means": the CLI loads
 * what the verb needs).
 */
export function yamlLibrary(): YamlLibrary {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as YamlLibrary);
}

export interface ParsedYaml {
  readonly value: unknown;
  /** The 1-based line of the node at `path`, or of its nearest ancestor that exists. */
  readonly lineOf: (path: readonly PropertyKey[]) => number | undefined;
}

/** Parses one YAML document; syntax errors throw `code` with one problem per error. */
export function parseYaml(text: string, file: string, code: ErrorCode): ParsedYaml {
  const { LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, visit } = yamlLibrary();
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, {
    lineCounter,
    uniqueKeys: true,
    prettyErrors: true,
    schema: 'core',
    strict: true,
  });
  const problems: Problem[] = [...doc.errors, ...doc.warnings].map((error) => ({
    file,
    ...(error.linePos?.[0] ? { line: error.linePos[0].line } : {}),
    message: (error.message.split('\n')[0] ?? 'YAML error').replace(
      / at line \d+, column \d+:?$/,
      '',
    ),
  }));
  // zod's z.record skips a `__proto__` key without a word, so a map holding one would validate
  // with that key silently dropped: refuse it here, with its line (catalogue, "Hostile JSON").
  // Only a text that spells it out, or escapes characters (a double-quoted key could spell it
  // with escapes), can hold one: the walk is skipped for the rest (a 1,000-host fleet has 1,000
  // host files).
  if (text.includes('__proto__') || text.includes('\\'))
    visit(doc, {
      Pair(_, pair) {
        if (isScalar(pair.key) && pair.key.value === '__proto__') {
          const at = pair.key.range ? lineCounter.linePos(pair.key.range[0]).line : undefined;
          problems.push({
            file,
            ...(at ? { line: at } : {}),
            message: 'forbidden key "__proto__"',
          });
        }
      },
    });
  if (problems.length > 0) {
    throw new FleetError(code, `${file} is not valid YAML`, { problems });
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (error) {
    throw new FleetError(code, `${file} is not valid YAML`, {
      problems: [{ file, message: error instanceof Error ? error.message : String(error) }],
    });
  }
  return {
    value,
    lineOf: (path) => {
      // Walk the path; a key found in a map is reported at the key's own line (its value may be
      // an indented block that starts below it). A segment that does not exist stops the walk at
      // its parent.
      let node: unknown = doc.contents;
      let line = isNode(node) && node.range ? lineCounter.linePos(node.range[0]).line : undefined;
      for (const segment of path) {
        if (isMap(node)) {
          const pair = node.items.find((item) => isScalar(item.key) && item.key.value === segment);
          if (!pair) break;
          if (isNode(pair.key) && pair.key.range)
            line = lineCounter.linePos(pair.key.range[0]).line;
          node = pair.value;
        } else if (isSeq(node) && typeof segment === 'number') {
          const item: unknown = node.items[segment];
          if (!isNode(item) || !item.range) break;
          line = lineCounter.linePos(item.range[0]).line;
          node = item;
        } else {
          break;
        }
      }
      return line;
    },
  };
}
