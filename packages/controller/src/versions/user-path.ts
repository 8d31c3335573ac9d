/**
 * The PATH on the user's own terms where a login shell does not tell all of it (docs/version.md,
 * "The PATH tools are probed on"), read by pure parsers from the exact output of the platform's
 * own tool — anything else is refused, never guessed at:
 *
 * - macOS: `launchctl getenv PATH`, the PATH launchd gives what it starts in the user's domain —
 *   GUI applications and agents — when one was set with `launchctl setenv PATH` (launchctl(1):
 *   "getenv key: Prints the value of an environment variable that launchd would set for all
 *   processes launched in the caller's domain"; an unset variable prints nothing). Its
 *   directories come after the login shell's: the login shell's PATH wins where they differ.
 * - Windows: the registry, as a logon builds a user's PATH — the machine's
 *   `HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment` `Path`, then the user's
 *   `HKCU\Environment` `Path` after it (Microsoft Learn, "Environment Variables": the user's Path
 *   is appended to the system's), each read with `reg query KEY /v Path` and, when it is
 *   `REG_EXPAND_SZ`, its `%NAME%` references expanded as ExpandEnvironmentStrings does (a name is
 *   matched without regard to case; an undefined one is left as written).
 */

/** The machine's environment key (Microsoft Learn, "Environment Variables"). */
export const MACHINE_ENVIRONMENT_KEY =
  'HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment';
/** The user's environment key. */
export const USER_ENVIRONMENT_KEY = 'HKEY_CURRENT_USER\\Environment';

/**
 * What `launchctl getenv PATH` printed, or `null` when it set none (pure): one line, its newline
 * ended. Output of more than one line is not an answer.
 */
export function parseLaunchctlGetenv(stdout: string): string | null {
  const text = stdout.replace(/\r?\n$/, '');
  if (text === '' || /[\r\n]/.test(text)) return null;
  return text;
}

export interface RegistryValue {
  readonly type: 'REG_SZ' | 'REG_EXPAND_SZ';
  readonly data: string;
}

/**
 * The value `name` of `key` from `reg query KEY /v NAME` (pure), in the shape reg.exe prints it
 * (Microsoft Learn, "reg query"): blank lines, the key's full name on a line of its own, then
 * `    NAME    TYPE    DATA` — four spaces before each field. `null` for anything else: another
 * key, another value, a type that is not a string (REG_MULTI_SZ, REG_DWORD…), or extra lines.
 */
export function parseRegQuery(stdout: string, key: string, name: string): RegistryValue | null {
  const lines = stdout.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length !== 2 || lines[0]?.toLowerCase() !== key.toLowerCase()) return null;
  const match = /^ {4}(.+?) {4}(REG_SZ|REG_EXPAND_SZ) {4}(.*)$/.exec(lines[1] ?? '');
  if (match === null || match[1]?.toLowerCase() !== name.toLowerCase()) return null;
  return { type: match[2] as RegistryValue['type'], data: match[3] ?? '' };
}

/**
 * `%NAME%` references replaced from `env` as ExpandEnvironmentStrings does (pure): names match
 * without regard to case; a reference to an undefined variable stays as written.
 */
export function expandEnvironmentStrings(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const byName = new Map<string, string>();
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined) byName.set(key.toUpperCase(), value);
  }
  return text.replace(
    /%([^%;]+)%/g,
    (whole, name: string) => byName.get(name.toUpperCase()) ?? whole,
  );
}

/** A registry value's text: REG_EXPAND_SZ expanded, REG_SZ as written (pure). */
export function registryText(
  value: RegistryValue,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return value.type === 'REG_EXPAND_SZ' ? expandEnvironmentStrings(value.data, env) : value.data;
}

/** `first`'s entries, then `second`'s not already in it (pure; `delimiter` `:` or `;`). */
export function joinPaths(first: string, second: string, delimiter: ':' | ';'): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of [...first.split(delimiter), ...second.split(delimiter)]) {
    const key = delimiter === ';' ? entry.toLowerCase() : entry;
    if (entry === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out.join(delimiter);
}
