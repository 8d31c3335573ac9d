/**
 * What the fake `launchctl` takes from a job's property list, checked as launchd.plist(5) types its
 * keys. launchd ignores (and logs) keys it does not know; the fake refuses them, so nothing fleet
 * generates relies on a key whose behaviour the fake does not model.
 */
import { isAbsolute } from 'node:path';
import { PlistError, type PlistDict, type PlistValue } from './plist-file.js';

/** launchd.plist(5) `ProcessType`: exactly these four values. */
export const PROCESS_TYPES = ['Background', 'Standard', 'Adaptive', 'Interactive'] as const;

export interface LaunchdJob {
  readonly label: string;
  /** `Program`, else `ProgramArguments[0]` (launchd.plist(5) `Program`). */
  readonly program: string;
  readonly argv: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly workingDirectory: string | null;
  readonly stdoutPath: string | null;
  readonly stderrPath: string | null;
  /** `KeepAlive`: never, always, or only after a failure (`{ SuccessfulExit: false }`). */
  readonly keepAlive: 'no' | 'always' | 'after-failure' | 'after-success';
  readonly runAtLoad: boolean;
  readonly startInterval: number | null;
  readonly processType: (typeof PROCESS_TYPES)[number] | null;
  readonly abandonProcessGroup: boolean;
  /** Seconds between SIGTERM and SIGKILL on a stop (launchd.plist(5) `ExitTimeOut`). */
  readonly exitTimeout: number;
  readonly throttleInterval: number;
}

const KNOWN = new Set([
  'Label',
  'Program',
  'ProgramArguments',
  'EnvironmentVariables',
  'WorkingDirectory',
  'StandardOutPath',
  'StandardErrorPath',
  'KeepAlive',
  'RunAtLoad',
  'StartInterval',
  'ProcessType',
  'AbandonProcessGroup',
  'ExitTimeOut',
  'ThrottleInterval',
]);

const isDict = (value: PlistValue | undefined): value is PlistDict =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  !(value instanceof Date) &&
  !(value instanceof Uint8Array);

function typed<T>(
  plist: PlistDict,
  key: string,
  check: (value: PlistValue) => value is PlistValue & T,
  what: string,
): T | undefined {
  const value = plist[key];
  if (value === undefined) return undefined;
  if (!check(value)) throw new PlistError(`${key} must be ${what}`);
  return value;
}
const isString = (v: PlistValue): v is string => typeof v === 'string';
const isBool = (v: PlistValue): v is boolean => typeof v === 'boolean';
const isInteger = (v: PlistValue): v is number => typeof v === 'number' && Number.isInteger(v);

/** A path key launchd opens as given: absolute (launchd expands no `~` and no variables). */
function pathKey(plist: PlistDict, key: string): string | null {
  const value = typed(plist, key, isString, 'a string');
  if (value === undefined) return null;
  if (!isAbsolute(value))
    throw new PlistError(`${key} ${JSON.stringify(value)} is not an absolute path`);
  return value;
}

function keepAliveOf(plist: PlistDict): LaunchdJob['keepAlive'] {
  const value = plist['KeepAlive'];
  if (value === undefined || value === false) return 'no';
  if (value === true) return 'always';
  if (!isDict(value)) throw new PlistError('KeepAlive must be a boolean or a dictionary');
  const keys = Object.keys(value);
  if (keys.length !== 1 || typeof value['SuccessfulExit'] !== 'boolean') {
    throw new PlistError('KeepAlive: the fake models only { SuccessfulExit: <boolean> }');
  }
  // launchd.plist(5): "If true, the job will be restarted as long as the program exits and with
  // an exit status of zero. If false, the job will be restarted in the inverse condition."
  return value['SuccessfulExit'] ? 'after-success' : 'after-failure';
}

/** Checks a job's keys (launchd.plist(5)); throws {@link PlistError} naming the first problem. */
export function readLaunchdJob(plist: PlistDict): LaunchdJob {
  for (const key of Object.keys(plist)) {
    if (!KNOWN.has(key)) throw new PlistError(`the key ${key} is not modelled by the fake`);
  }
  const label = typed(plist, 'Label', isString, 'a string');
  // launchd.plist(5) "Label: This required key uniquely identifies the job to launchd."
  if (label === undefined || label === '')
    throw new PlistError('the required key Label is missing');
  const argv = plist['ProgramArguments'];
  if (argv !== undefined && (!Array.isArray(argv) || !argv.every(isString) || argv.length === 0)) {
    throw new PlistError('ProgramArguments must be a non-empty array of strings');
  }
  const program = typed(plist, 'Program', isString, 'a string') ?? argv?.[0];
  // "This key is required in the absence of the ProgramArguments key" (Program).
  if (program === undefined) throw new PlistError('neither Program nor ProgramArguments is set');
  const environment = plist['EnvironmentVariables'] ?? {};
  if (!isDict(environment) || !Object.values(environment).every(isString)) {
    throw new PlistError('EnvironmentVariables must be a dictionary of strings');
  }
  const processType = typed(plist, 'ProcessType', isString, 'a string');
  if (processType !== undefined && !(PROCESS_TYPES as readonly string[]).includes(processType)) {
    throw new PlistError(
      `ProcessType ${JSON.stringify(processType)} is not one of ${PROCESS_TYPES.join(', ')}`,
    );
  }
  const startInterval = typed(plist, 'StartInterval', isInteger, 'an integer') ?? null;
  if (startInterval !== null && startInterval <= 0)
    throw new PlistError('StartInterval must be a positive integer');
  return {
    label,
    program,
    argv: argv ?? [program],
    environment: environment as Record<string, string>,
    workingDirectory: pathKey(plist, 'WorkingDirectory'),
    stdoutPath: pathKey(plist, 'StandardOutPath'),
    stderrPath: pathKey(plist, 'StandardErrorPath'),
    keepAlive: keepAliveOf(plist),
    runAtLoad: typed(plist, 'RunAtLoad', isBool, 'a boolean') ?? false,
    startInterval,
    processType: (processType as LaunchdJob['processType'] | undefined) ?? null,
    abandonProcessGroup: typed(plist, 'AbandonProcessGroup', isBool, 'a boolean') ?? false,
    exitTimeout: typed(plist, 'ExitTimeOut', isInteger, 'an integer') ?? 5,
    throttleInterval: typed(plist, 'ThrottleInterval', isInteger, 'an integer') ?? 10,
  };
}
