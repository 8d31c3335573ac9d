/**
 * The fake `systemctl`'s own reading of a unit file — written from systemd.syntax(7) and
 * systemd.service(5), independently of the adapter that generates units, so a test checks the
 * generator against a second reading. Supports what a service unit needs: sections, comments,
 * line continuations, `ExecStart=` command lines (quoting, C escapes, `%%`/`%h` specifiers,
 * `$$`, `$VAR`/`${VAR}` from `Environment=`), `Environment=`, `WorkingDirectory=`, `Restart=`,
 * `RestartSec=`. Anything it does not understand is an error, never a guess.
 */

export type UnitFile = ReadonlyMap<string, readonly (readonly [string, string])[]>;

export class UnitFileError extends Error {}

/** Sections → `[key, value]` in order. */
export function parseUnitFile(text: string): UnitFile {
  const sections = new Map<string, [string, string][]>();
  let current: [string, string][] | null = null;
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    let line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      i += 1;
      const next = (lines[i] as string).trim();
      line = next.startsWith('#') || next.startsWith(';') ? line : `${line.slice(0, -1)} ${next}`;
    }
    const section = /^\[([^\]]+)\]$/.exec(line);
    if (section) {
      current = sections.get(section[1] as string) ?? [];
      sections.set(section[1] as string, current);
      continue;
    }
    const equals = line.indexOf('=');
    if (equals <= 0 || current === null)
      throw new UnitFileError(`line ${i + 1}: not "Key=Value" inside a section`);
    current.push([line.slice(0, equals).trim(), line.slice(equals + 1).trim()]);
  }
  return sections;
}

/** The last value of `key` in `section` (systemd: a later assignment overrides). */
export function unitValue(unit: UnitFile, section: string, key: string): string | undefined {
  const entries = unit.get(section)?.filter(([k]) => k === key) ?? [];
  return entries[entries.length - 1]?.[1];
}

export function unitValues(unit: UnitFile, section: string, key: string): string[] {
  return (unit.get(section) ?? []).filter(([k]) => k === key).map(([, v]) => v);
}

const ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
  s: ' ',
};

/** Expands `%%`, `%h` (home), `%t` (runtime dir); any other specifier is an error here. */
export function expandSpecifiers(
  value: string,
  specifiers: Readonly<Record<string, string>>,
): string {
  return value.replace(/%(.)/g, (_, letter: string) => {
    if (letter === '%') return '%';
    const expansion = specifiers[letter];
    if (expansion === undefined) throw new UnitFileError(`unsupported specifier %${letter}`);
    return expansion;
  });
}

/** Splits a command line into words (systemd.syntax "Quoting", C escapes inside and outside quotes). */
export function splitWords(value: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i] as string)) i += 1;
    if (i >= value.length) break;
    let word = '';
    let quote: string | null = null;
    if (value[i] === '"' || value[i] === "'") {
      quote = value[i] as string;
      i += 1;
    }
    for (;;) {
      if (i >= value.length) {
        if (quote) throw new UnitFileError('unterminated quote');
        break;
      }
      const ch = value[i] as string;
      if (quote && ch === quote) {
        i += 1;
        if (i < value.length && !/\s/.test(value[i] as string))
          throw new UnitFileError('a closing quote must end the word');
        break;
      }
      if (!quote && /\s/.test(ch)) break;
      if (ch === '\\') {
        const next = value[i + 1];
        if (next === undefined) throw new UnitFileError('trailing backslash');
        if (next === 'x') {
          const hex = value.slice(i + 2, i + 4);
          if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new UnitFileError('bad \\x escape');
          word += String.fromCharCode(Number.parseInt(hex, 16));
          i += 4;
          continue;
        }
        if (/[0-7]/.test(next)) {
          const oct = value.slice(i + 1, i + 4);
          if (!/^[0-7]{3}$/.test(oct)) throw new UnitFileError('bad octal escape');
          word += String.fromCharCode(Number.parseInt(oct, 8));
          i += 4;
          continue;
        }
        const escaped = ESCAPES[next];
        if (escaped === undefined) throw new UnitFileError(`unknown escape \\${next}`);
        word += escaped;
        i += 2;
        continue;
      }
      word += ch;
      i += 1;
    }
    words.push(word);
  }
  return words;
}

/** Expands `$$`, `${VAR}` and `$VAR` (a whole word) from `env`, as systemd does in ExecStart. */
function expandVariables(word: string, env: Readonly<Record<string, string>>): string {
  return word.replace(
    /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_, all: string, braced?: string, bare?: string) =>
      all === '$' ? '$' : (env[(braced ?? bare) as string] ?? ''),
  );
}

/** `Environment=` assignments (each value may hold several quoted `KEY=VALUE` words). */
export function parseEnvironment(
  values: readonly string[],
  specifiers: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of values) {
    for (const word of splitWords(expandSpecifiers(value, specifiers))) {
      const equals = word.indexOf('=');
      if (equals <= 0) throw new UnitFileError(`Environment: "${word}" is not KEY=VALUE`);
      env[word.slice(0, equals)] = word.slice(equals + 1);
    }
  }
  return env;
}

/** `ExecStart=` as argv; prefixes other than `-` and `@` are refused. */
export function parseExecStart(
  value: string,
  specifiers: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string>>,
): string[] {
  const words = splitWords(expandSpecifiers(value, specifiers)).map((w) => expandVariables(w, env));
  let first = words[0];
  if (first === undefined) throw new UnitFileError('ExecStart is empty');
  while (first.startsWith('-') || first.startsWith('@')) {
    if (first.startsWith('@'))
      throw new UnitFileError('ExecStart "@" prefix is not supported by the fake');
    first = first.slice(1);
  }
  if (/^[+!:]/.test(first))
    throw new UnitFileError(`ExecStart prefix ${first[0]} is not supported by the fake`);
  if (!first.startsWith('/'))
    throw new UnitFileError(`ExecStart executable "${first}" is not an absolute path`);
  return [first, ...words.slice(1)];
}

/** `RestartSec=` ("5", "5s", "500ms", "1min") in milliseconds. */
export function parseTimespan(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min)?$/.exec(value.trim());
  if (!match) throw new UnitFileError(`bad time span "${value}"`);
  const n = Number(match[1]);
  const unit = match[2] ?? 's';
  return Math.round(unit === 'ms' ? n : unit === 'm' || unit === 'min' ? n * 60_000 : n * 1000);
}
