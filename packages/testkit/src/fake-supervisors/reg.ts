/**
 * A fake `reg` (reg.exe; see README.md, "Fake supervisors"): exactly `reg query KEY /v NAME`
 * (Microsoft Learn, "reg query"), for the string values a user's environment holds, from
 * `<state>/registry/values.json` (`FakeSupervisorHost.setRegistryValue`). What reg.exe does, and the fake
 * with it:
 *
 * - `HKCU` and `HKLM` abbreviate `HKEY_CURRENT_USER` and `HKEY_LOCAL_MACHINE`; the key is printed
 *   by its full name. Keys and value names match without regard to case.
 * - A value found prints a blank line, the key's full name, then `    NAME    TYPE    DATA` (four
 *   spaces before each field) and a blank line, CRLF-ended, exit 0.
 * - A key or value that does not exist: `ERROR: The system was unable to find the specified
 *   registry key or value.` on stderr, exit 1. Any other form: `ERROR: Invalid syntax.`, exit 1.
 */
import { join } from 'node:path';
import { fail, logCall, ok, readJson, stateRoot, type CliResult, type Env } from './common.js';

export interface RegistryEntry {
  readonly type: 'REG_SZ' | 'REG_EXPAND_SZ';
  readonly data: string;
}
/** Full key name → value name → value. */
export type FakeRegistry = Record<string, Record<string, RegistryEntry>>;

const ROOTS: Record<string, string> = {
  HKCU: 'HKEY_CURRENT_USER',
  HKLM: 'HKEY_LOCAL_MACHINE',
  HKEY_CURRENT_USER: 'HKEY_CURRENT_USER',
  HKEY_LOCAL_MACHINE: 'HKEY_LOCAL_MACHINE',
};

export const registryFile = (env: Env): string => join(stateRoot(env), 'registry', 'values.json');

/** `HKCU\…` as its full name, or `null` when its root is not one reg.exe knows. */
export function fullKeyName(key: string): string | null {
  const at = key.indexOf('\\');
  const root = ROOTS[(at === -1 ? key : key.slice(0, at)).toUpperCase()];
  return root === undefined ? null : `${root}${at === -1 ? '' : key.slice(at)}`;
}

const find = <T>(record: Record<string, T>, name: string): [string, T] | undefined =>
  Object.entries(record).find(([key]) => key.toLowerCase() === name.toLowerCase());

export function reg(argv: string[], env: Env): Promise<CliResult> {
  logCall(join(stateRoot(env), 'registry'), ['reg', ...argv]);
  const [verb, key, flag, name, ...extra] = argv;
  const full = key === undefined ? null : fullKeyName(key);
  if (
    verb?.toLowerCase() !== 'query' ||
    full === null ||
    flag?.toLowerCase() !== '/v' ||
    name === undefined ||
    extra.length > 0
  ) {
    return Promise.resolve(fail(1, 'ERROR: Invalid syntax.\r\nType "REG QUERY /?" for usage.\r\n'));
  }
  const values = find(readJson<FakeRegistry>(registryFile(env), {}), full);
  const value = values === undefined ? undefined : find(values[1], name);
  if (values === undefined || value === undefined) {
    return Promise.resolve(
      fail(1, 'ERROR: The system was unable to find the specified registry key or value.\r\n'),
    );
  }
  const [valueName, entry] = value;
  return Promise.resolve(
    ok(`\r\n${values[0]}\r\n    ${valueName}    ${entry.type}    ${entry.data}\r\n\r\n`),
  );
}
