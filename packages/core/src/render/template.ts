/**
 * fleet's whole template language (contract §4): `{{ host.NAME }}` and `{{ secret.NAME }}`, nothing
 * else — no logic, no loops — so a rendering can be reversed (adopt) and redacted (secrets back to
 * names). Everything here is pure.
 *
 * A `{{ … }}` whose content looks like a variable reference but is neither form is an error (fail
 * closed: a typo must not ship as literal text). Other uses of braces (`{{#each}}`, `{{ .Values }}`)
 * are ordinary text; a literal `{{` is written `{{ "{{" }}` ({@link LITERAL_OPEN_BRACES}).
 */
import { FleetError, type Problem } from '../errors.js';
import type { PlaceholderNamespace } from './placeholder.js';
import { valueReplacer } from './substitute.js';

export { placeholder, type PlaceholderNamespace } from './placeholder.js';

export interface Placeholder {
  readonly namespace: PlaceholderNamespace;
  readonly name: string;
  /** 1-based line of the placeholder. */
  readonly line: number;
  readonly start: number;
  readonly end: number;
}

const CANDIDATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/**
 * A literal `{{` in a template is written `{{ "{{" }}` — what Go templates (chezmoi, Helm) and
 * Jinja (Ansible's `template`) users already write for one, so `{{ "{{" }} name }}` renders as
 * `{{ name }}`; `{{ "}}" }}`, its pair in those languages, is a literal `}}` (a `}}` alone is text
 * already), so a line escaped for Go or Jinja renders the same here. Its own text is not a
 * placeholder (a quote is no name), and a whole file of such text is better an entry with
 * `template: false` (contract §10.4).
 */
export const LITERAL_OPEN_BRACES = '{{ "{{" }}';
const LITERAL_OPEN = /\{\{\s*"(\{\{|\}\})"\s*\}\}/g;
/** What follows an escape to make the literal text a secret placeholder (refused, see below). */
const SECRET_AFTER = /^\s*secret\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}/;

/** A secret placeholder at the start of a text: what the node's redaction writes for a value. */
const SECRET_PLACEHOLDER = /^\{\{\s*secret\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}/;

/**
 * Adopt's reverse of {@link unescapeBraces}: captured text as a template that renders back to it.
 * Every `{{` of the text is written {@link LITERAL_OPEN_BRACES} — a tmux `"{{ session }}"`, a
 * mustache `{{#each}}`, even a literal `{{ host.NAME }}` — except where a `{{ secret.NAME }}`
 * starts: that is the node's redaction of a secret's value (`secrets/redact.ts`), which must stay
 * a placeholder. So `renderTemplate(escapeLiteralBraces(text))` is `text` with those placeholders.
 */
export function escapeLiteralBraces(text: string): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf('{{'); at >= 0; at = text.indexOf('{{', from)) {
    const secret = SECRET_PLACEHOLDER.exec(text.slice(at));
    out += text.slice(from, at) + (secret === null ? LITERAL_OPEN_BRACES : secret[0]);
    from = at + (secret === null ? 2 : secret[0].length);
  }
  return out + text.slice(from);
}

/** True when `text` holds a literal-braces escape (a line the history index must render too). */
export function hasLiteralBraces(text: string): boolean {
  LITERAL_OPEN.lastIndex = 0;
  return LITERAL_OPEN.test(text);
}

/** `text` (template text between placeholders) with each escape made the braces it stands for. */
export function unescapeBraces(text: string): string {
  return text.includes('"{{"') || text.includes('"}}"')
    ? text.replace(LITERAL_OPEN, (_match, braces: string) => braces)
    : text;
}

/**
 * An escape that would render as a `{{ secret.NAME }}` of text: the node resolves every secret
 * placeholder it is sent, so such a template is refused with its line (an entry with
 * `template: false` writes that text as it is).
 */
function literalSecretProblems(text: string, file: string): Problem[] {
  if (!text.includes('"{{"')) return [];
  const problems: Problem[] = [];
  const cache = { index: 0, line: 1 };
  for (const match of text.matchAll(LITERAL_OPEN)) {
    if (match[1] !== '{{' || !SECRET_AFTER.test(text.slice(match.index + match[0].length)))
      continue;
    problems.push({
      file,
      line: lineAt(text, match.index, cache),
      message: `${LITERAL_OPEN_BRACES} before secret.NAME }} would write a secret placeholder as text, which the node resolves: give this file's entry template: false instead`,
    });
  }
  return problems;
}
const VALID = /^(host|secret)\.([A-Za-z_][A-Za-z0-9_]*)$/;

function lineAt(text: string, index: number, cache: { index: number; line: number }): number {
  for (let i = cache.index; i < index; i += 1) if (text.charCodeAt(i) === 10) cache.line += 1;
  cache.index = index;
  return cache.line;
}

/** Every placeholder in `text`, and a problem for every unsupported one. */
export function scanPlaceholders(
  text: string,
  file?: string,
): { placeholders: Placeholder[]; problems: Problem[] } {
  const placeholders: Placeholder[] = [];
  const problems: Problem[] = [];
  const cache = { index: 0, line: 1 };
  for (const match of text.matchAll(CANDIDATE)) {
    const line = lineAt(text, match.index, cache);
    const valid = VALID.exec(match[1] as string);
    if (!valid) {
      problems.push({
        ...(file === undefined ? {} : { file }),
        line,
        message: `unsupported placeholder ${match[0]}: only {{ host.NAME }} and {{ secret.NAME }} exist`,
      });
      continue;
    }
    placeholders.push({
      namespace: valid[1] as PlaceholderNamespace,
      name: valid[2] as string,
      line,
      start: match.index,
      end: match.index + match[0].length,
    });
  }
  return { placeholders, problems };
}

export interface RenderOptions {
  /** Repo-relative file name, for problems. */
  readonly file: string;
  /** The host's variables (`hosts/<host>.yaml`). */
  readonly variables: Readonly<Record<string, string>>;
  /** The variables the domain allows; any other `{{ host.NAME }}` fails. */
  readonly allowed: readonly string[];
  /** Names the host file for problems about missing variables (`hosts/alpha.yaml`). */
  readonly hostFile: string;
}

/**
 * Operator-side render: host placeholders substituted, secret placeholders left as they are.
 * Throws `RENDER_FAILED` listing every unsupported placeholder, undeclared or missing variable,
 * each with its file and line.
 */
export function renderTemplate(text: string, options: RenderOptions): string {
  const { placeholders, problems } = scanPlaceholders(text, options.file);
  problems.push(...literalSecretProblems(text, options.file));
  const allowed = new Set(options.allowed);
  let out = '';
  let last = 0;
  for (const ph of placeholders) {
    if (ph.namespace !== 'host') continue;
    if (!allowed.has(ph.name)) {
      problems.push({
        file: options.file,
        line: ph.line,
        message: `host variable ${ph.name} is not declared by this domain (allowed: ${
          [...allowed].sort().join(', ') || 'none'
        })`,
      });
      continue;
    }
    if (!Object.hasOwn(options.variables, ph.name)) {
      problems.push({
        file: options.file,
        line: ph.line,
        message: `host variable ${ph.name} is not set in ${options.hostFile}`,
      });
      continue;
    }
    out += unescapeBraces(text.slice(last, ph.start)) + (options.variables[ph.name] as string);
    last = ph.end;
  }
  if (problems.length > 0) {
    problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw new FleetError(
      'RENDER_FAILED',
      `${options.file} does not render for ${options.hostFile}: ${problems[0]?.message ?? ''}${
        problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''
      }`,
      { problems },
    );
  }
  return out + unescapeBraces(text.slice(last));
}

/** The secret names a text refers to, in order of first use. */
export function secretNames(text: string): string[] {
  const names = scanPlaceholders(text).placeholders.filter((ph) => ph.namespace === 'secret');
  return [...new Set(names.map((ph) => ph.name))];
}

export interface ReverseResult {
  readonly content: string;
  /** How often each variable's value was replaced by its placeholder. */
  readonly substitutions: Readonly<Record<string, number>>;
}

/**
 * Adopt's reverse substitution: every occurrence of a host variable's value becomes its
 * `{{ host.NAME }}` placeholder, longest value first (so `node-01.lan` wins over `node-01`).
 * Existing placeholders are left alone; empty values are never substituted.
 */
export function reverseSubstitute(
  text: string,
  variables: Readonly<Record<string, string>>,
): ReverseResult {
  const replace = valueReplacer(Object.entries(variables), 'host');
  if (!replace) return { content: text, substitutions: {} };
  const substitutions: Record<string, number> = {};
  const { placeholders } = scanPlaceholders(text);
  let out = '';
  let last = 0;
  for (const ph of placeholders) {
    out += replace(text.slice(last, ph.start), substitutions) + text.slice(ph.start, ph.end);
    last = ph.end;
  }
  out += replace(text.slice(last), substitutions);
  return { content: out, substitutions };
}
