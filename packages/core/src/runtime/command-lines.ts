/**
 * The command-line quoting of the two supervisors' definition files, shared by the bootstrap
 * adapters (the controller's unit or task) and the operator's schedule generator (`fleet schedule
 * install`), so the two always quote alike (contract §12).
 *
 * systemd: systemd.syntax(7) and systemd.service(5), "Command lines": a word that is not plainly
 * safe is double-quoted with C escapes; `%` is written `%%` (specifiers) and, in `ExecStart=`, `$`
 * is written `$$` (environment variable expansion). Windows: Task Scheduler XML's escaping and the
 * `CommandLineToArgvW` rules for `Arguments`.
 */
import { FleetError } from '../errors.js';

/** The XML namespace of a Task Scheduler task document. */
export const TASK_NAMESPACE = 'http://schemas.microsoft.com/windows/2004/02/mit/task';

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

function cEscape(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is escaped
  return value.replace(/[\\"\x00-\x1f\x7f]/g, (ch) => {
    const named: Record<string, string> = {
      '\\': '\\\\',
      '"': '\\"',
      '\n': '\\n',
      '\t': '\\t',
      '\r': '\\r',
    };
    return named[ch] ?? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

/** One word of a command line (`dollars`: escape `$` too, as `ExecStart=` expands variables). */
export function quoteSystemdWord(word: string, dollars = true): string {
  if (word.includes('\0'))
    throw new FleetError('USAGE', 'systemd unit: a NUL byte cannot be part of a command line');
  let escaped = word.replace(/%/g, '%%');
  if (dollars) escaped = escaped.replace(/\$/g, '$$$$');
  // (the executable, the only word where a leading -@:+! is a prefix, is always absolute)
  if (escaped !== '' && SAFE_WORD.test(escaped)) return escaped;
  return `"${cEscape(escaped)}"`;
}

const C_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  '"': '"',
  "'": "'",
  s: ' ',
};

/** Splits a command line we generate (bare and double- or single-quoted words, C escapes). */
export function splitSystemdCommandLine(value: string, dollars = true): string[] {
  const words: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\S+))/gy;
  let match: RegExpExecArray | null;
  while ((match = re.exec(value)) !== null && match[0].trim() !== '') {
    const raw = match[1] ?? match[2] ?? match[3] ?? '';
    let word = raw.replace(/\\x([0-9a-fA-F]{2})|\\(.)/g, (_, hex?: string, ch?: string) =>
      hex
        ? String.fromCharCode(Number.parseInt(hex, 16))
        : (C_ESCAPES[ch as string] ?? (ch as string)),
    );
    word = word.replace(/%%/g, '%');
    if (dollars) word = word.replace(/\$\$/g, '$');
    words.push(word);
  }
  return words;
}

/** Escapes text for an XML element or attribute. */
export function xmlEscape(value: string): string {
  return value.replace(
    /[<>&"']/g,
    (ch) =>
      ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[ch] as string,
  );
}

/** One argument, quoted so CommandLineToArgvW and the C runtime give it back exactly. */
export function quoteWindowsArgument(arg: string): string {
  if (arg !== '' && !/[\s"]/.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes += 1;
      continue;
    }
    out += ch === '"' ? `${'\\'.repeat(backslashes * 2 + 1)}"` : `${'\\'.repeat(backslashes)}${ch}`;
    backslashes = 0;
  }
  return `${out}${'\\'.repeat(backslashes * 2)}"`;
}

/** Splits an `Arguments` string by the same rules (the inverse of {@link quoteWindowsArgument}). */
export function splitWindowsArguments(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i += 1;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    while (i < line.length && (quoted || (line[i] !== ' ' && line[i] !== '\t'))) {
      const ch = line[i] as string;
      if (ch === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n += 1;
          i += 1;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(n >> 1);
          if (n % 2 === 1) {
            arg += '"';
            i += 1;
          }
        } else arg += '\\'.repeat(n);
      } else if (ch === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 2;
        } else {
          quoted = !quoted;
          i += 1;
        }
      } else {
        arg += ch;
        i += 1;
      }
    }
    args.push(arg);
  }
  return args;
}

/**
 * Task Scheduler schema's `pathType` (Exec's `Command` and `WorkingDirectory`): "cannot be an
 * empty string, and must be less than 260 characters" (learn.microsoft.com/windows/win32/taskschd/
 * taskschedulerschema-pathtype-simpletype).
 */
export const TASK_PATH_MAX = 260;
/**
 * CreateProcessW's lpCommandLine: "The maximum length of this string is 32,767 characters,
 * including the Unicode terminating null character" — the command line a task's action starts
 * with (`"Command" Arguments`).
 */
export const WINDOWS_COMMAND_LINE_MAX = 32_767;

/**
 * A task action's `Arguments` (each word quoted by {@link quoteWindowsArgument}), checked against
 * what Task Scheduler and CreateProcess take, so that a task is never registered that would not
 * start: `USAGE` naming the limit, before anything is written.
 */
export function windowsTaskArguments(
  command: string,
  args: readonly string[],
  workingDirectory: string,
): string {
  const refuse = (message: string) => new FleetError('USAGE', `scheduled task: ${message}`);
  for (const [what, path] of [
    ['command', command],
    ['working directory', workingDirectory],
  ] as const) {
    if (path === '') throw refuse(`the ${what} is empty`);
    if (path.length >= TASK_PATH_MAX)
      throw refuse(
        `the ${what} has ${path.length} characters; Task Scheduler takes a path of less than ${TASK_PATH_MAX}`,
      );
  }
  const text = args.map(quoteWindowsArgument).join(' ');
  const length = `"${command}" ${text}`.length + 1;
  if (length > WINDOWS_COMMAND_LINE_MAX)
    throw refuse(
      `the command line would have ${length} characters; Windows starts one of at most ${WINDOWS_COMMAND_LINE_MAX}`,
    );
  return text;
}
