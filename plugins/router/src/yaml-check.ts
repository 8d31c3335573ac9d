/**
 * The router's configuration is YAML (contract §10.1): content that does not parse is refused before
 * anything is written. Problems name the line and the kind of error, never the content (a YAML
 * error message can quote the text, and a resolved file holds secret values).
 */
import { createRequire } from 'node:module';
import type { YAMLError } from 'yaml';
import { scanPlaceholders, type Problem } from '@fleet/core/plugin';

type YamlLibrary = typeof import('yaml');
let yamlModule: YamlLibrary | undefined;
/** yaml, loaded when a file is first parsed: a verb that parses none never loads it (contract §14). */
const yaml = (): YamlLibrary =>
  (yamlModule ??= createRequire(import.meta.url)('yaml') as YamlLibrary);

const WHAT: Readonly<Record<string, string>> = {
  DUPLICATE_KEY: 'a key appears twice in one mapping',
  BAD_INDENT: 'bad indentation',
  TAB_AS_INDENT: 'a tab is used for indentation',
  MULTILINE_IMPLICIT_KEY: 'an implicit key spans more than one line',
  BLOCK_AS_IMPLICIT_KEY: 'a block collection is used as an implicit key',
  MISSING_CHAR: 'a closing quote or bracket is missing',
  UNEXPECTED_TOKEN: 'unexpected token',
  BAD_SCALAR_START: 'a plain value starts with a reserved character',
  MULTIPLE_DOCS: 'more than one document',
  MULTIPLE_ANCHORS: 'a node has two anchors',
  MULTIPLE_TAGS: 'a node has two tags',
  BAD_ALIAS: 'an alias is invalid',
  BAD_DIRECTIVE: 'a directive is invalid',
  BAD_DQ_ESCAPE: 'an invalid escape in a double-quoted string',
  TAG_RESOLVE_FAILED: 'a tag cannot be resolved',
  IMPOSSIBLE: 'unparseable input',
  KEY_OVER_1024_CHARS: 'an implicit key is longer than 1024 characters',
  ALIAS_PROPS: 'an alias carries an anchor or tag',
};

function describe(error: YAMLError): string {
  return `${WHAT[error.code] ?? 'YAML error'} (${error.code})`;
}

/**
 * Problems of `text` as YAML (empty when it parses): duplicate keys are errors, as is anything
 * the parser warns about. `{{ secret.NAME }}` placeholders stand for values resolved on the node
 * and are read as plain scalars here (same line, same column).
 */
export function yamlProblems(text: string, file: string): Problem[] {
  let neutral = '';
  let last = 0;
  for (const ph of scanPlaceholders(text).placeholders) {
    if (ph.namespace !== 'secret') continue;
    neutral += `${text.slice(last, ph.start)}fleet-secret-${ph.name}`;
    last = ph.end;
  }
  neutral += text.slice(last);
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(neutral, {
    lineCounter,
    uniqueKeys: true,
    strict: true,
    prettyErrors: false,
  });
  const problems: Problem[] = [...doc.errors, ...doc.warnings].map((error) => ({
    file,
    line: lineCounter.linePos(error.pos[0]).line,
    message: `not valid YAML: ${describe(error)}`,
  }));
  // Aliases are the only way a parsed document still fails when converted (an alias bomb, a
  // loop): only a text that has one pays for the conversion (drift checks every host's view).
  if (problems.length === 0 && neutral.includes('*')) {
    try {
      doc.toJS({ maxAliasCount: 50 });
    } catch {
      problems.push({ file, message: 'not valid YAML: too many aliases (or an alias loop)' });
    }
  }
  return problems;
}

/** `file:line: message` of the first problem, for an error message. */
export function firstProblem(problems: readonly Problem[]): string {
  const [first] = problems;
  if (!first) return '';
  return `${first.file ?? ''}${first.line ? `:${first.line}` : ''}: ${first.message}`;
}
