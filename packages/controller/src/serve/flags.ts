/**
 * Flag parsing for the controller's own entries (`controller serve`, `controller runtime-run`),
 * which run without oclif (contract §14) but keep the CLI's usage contract (contract §7): a bad
 * flag is `USAGE` (exit 2) in one line with `hint: see --help`, worded as oclif words it.
 */
import { stat } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { FleetError } from '@fleet/core/node';

export const usage = (message: string) =>
  new FleetError('USAGE', message, { suggestions: ['see --help'] });

/** The flags an entry takes: value flags, switches, and which value flags it requires. */
export interface EntryFlagSpec {
  readonly strings: readonly string[];
  readonly booleans?: readonly string[];
  readonly required?: readonly string[];
}

/** What an entry's command line said. */
export interface EntryFlags {
  /** A value flag's value; undefined when absent. */
  readonly text: (name: string) => string | undefined;
  /** Whether a switch was given. */
  readonly flag: (name: string) => boolean;
}

/**
 * `argv` parsed strictly against `spec` (no positionals); a parse failure or a missing required
 * flag is `USAGE`.
 */
export function parseEntryArgs(argv: readonly string[], spec: EntryFlagSpec): EntryFlags {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const name of spec.strings) options[name] = { type: 'string' };
  for (const name of spec.booleans ?? []) options[name] = { type: 'boolean' };
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const option = /'(-[^']*)'/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw usage(`Nonexistent flag: ${option}`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw usage(`Unexpected argument: ${/'([^']*)'/.exec(message)?.[1] ?? ''}`);
    }
    throw usage(`Flag ${option.split(' ')[0] ?? ''} expects a value`);
  }
  const text = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const missing = (spec.required ?? []).filter((name) => text(name) === undefined);
  if (missing.length > 0) {
    throw usage(
      `Missing required flag${missing.length > 1 ? 's' : ''} ${missing.map((m) => `--${m}`).join(', ')}`,
    );
  }
  return { text, flag: (name) => values[name] === true };
}

/** Refuses (`USAGE`) a `--flag` path that is not an existing file or directory. */
export async function requireKind(
  flag: string,
  path: string,
  kind: 'file' | 'directory',
): Promise<void> {
  let ok = false;
  try {
    const found = await stat(path);
    ok = kind === 'file' ? found.isFile() : found.isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw usage(`--${flag}: no ${kind} found at ${path}`);
}
