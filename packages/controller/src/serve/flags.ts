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

/** `argv` parsed strictly against `options` (no positionals); a parse failure is `USAGE`. */
export function parseEntryArgs(
  argv: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
): Record<string, string | boolean | undefined> {
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options,
    });
    return values as Record<string, string | boolean | undefined>;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const option = /'(-[^']*)'/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw usage(`Nonexistent flag: ${option}`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw usage(`Unexpected argument: ${/'([^']*)'/.exec(message)?.[1] ?? ''}`);
    }
    throw usage(`Flag ${option.split(' ')[0] ?? ''} expects a value`);
  }
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
