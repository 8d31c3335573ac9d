/**
 * A fake `schtasks` (see README.md, "Fake supervisors"): it parses the Task Scheduler XML it is
 * given (the encoding its declaration names, UTF-16LE with a BOM or UTF-8), checks the elements
 * the schema requires, keeps registered tasks in `<state dir>/schtasks/`, and really starts and ends
 * the program of the task's `Actions/Exec` (`Command` + `Arguments`, split with the Windows
 * command-line rules). Exactly these forms (switches case-insensitive):
 *
 *   schtasks /Create /XML FILE /TN NAME [/F]
 *   schtasks /Run /TN NAME
 *   schtasks /End /TN NAME
 *   schtasks /Query /TN NAME /XML
 *   schtasks /Query /TN NAME /FO LIST /V
 *
 * Anything else exits 1 with schtasks' "Invalid argument" message.
 *
 * The schema's types, the principal keyref and the command-line limit are checked as Task
 * Scheduler checks them (task-schema.ts, with the documents cited there).
 *
 * As strict as Task Scheduler about what an action may carry: `Exec` holds `Command`, `Arguments`
 * and `WorkingDirectory` and nothing else (there is no environment element), and a started task
 * gets the user's logon environment — never the environment of the shell that ran `/Run`: its
 * `FLEET_*` and `XDG_*` variables are not passed on ({@link logonEnv}), so a task that needs one
 * must carry it on its own command line.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  activeFaults,
  fail,
  logCall,
  ok,
  readJson,
  runtimeEnv,
  stateRoot,
  writeJson,
  type CliResult,
  type Env,
} from './common.js';
import { isRunning, readRun, startRun, stopRun } from './runs.js';
import { checkCommandLine, checkExec, checkPrincipals, checkSettings } from './task-schema.js';
import { child, parseXml, textAt, XmlError, type XmlElement } from './xml.js';

export const TASK_NAMESPACE = 'http://schemas.microsoft.com/windows/2004/02/mit/task';
const TASK_CHILDREN = new Set([
  'RegistrationInfo',
  'Triggers',
  'Settings',
  'Data',
  'Principals',
  'Actions',
]);
const TRIGGERS = new Set([
  'BootTrigger',
  'CalendarTrigger',
  'EventTrigger',
  'IdleTrigger',
  'LogonTrigger',
  'RegistrationTrigger',
  'SessionStateChangeTrigger',
  'TimeTrigger',
]);
const LOGON_TYPES = new Set([
  'S4U',
  'Password',
  'InteractiveToken',
  'InteractiveTokenOrPassword',
  'ServiceAccount',
  'Group',
]);
/** SCHED_S_TASK_RUNNING, SCHED_S_TASK_HAS_NOT_RUN, ERROR_FILE_NOT_FOUND as an HRESULT. */
const RUNNING = 267009;
const NEVER_RAN = 267011;
const FILE_NOT_FOUND = 2147942402;

interface TaskRecord {
  readonly name: string;
  readonly xml: string;
  readonly registeredAt: string;
  lastRunTime: string | null;
  lastResult: number;
}

export function schtasksDir(env: Env): string {
  return join(stateRoot(env), 'schtasks');
}

const taskKey = (name: string): string =>
  name.replace(/^\\+/, '').toLowerCase().replace(/[\\/]/g, '__');
const taskPath = (env: Env, name: string): string =>
  join(schtasksDir(env), 'tasks', `${taskKey(name)}.json`);
const displayName = (name: string): string => `\\${name.replace(/^\\+/, '')}`;

/**
 * Splits a Windows command line the way the C runtime / CommandLineToArgvW do: whitespace
 * separates, `"` toggles quoting, `2n` backslashes before a `"` give `n` and toggle, `2n+1` give `n`
 * and a literal `"`, other backslashes are literal, and `""` inside quotes is a literal `"`.
 */
export function splitWindowsArguments(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i += 1;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    while (i < line.length && (quoted || (line[i] !== ' ' && line[i] !== '\t'))) {
      if (line[i] === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n += 1;
          i += 1;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(Math.floor(n / 2));
          if (n % 2 === 1) {
            arg += '"';
            i += 1;
          }
        } else arg += '\\'.repeat(n);
      } else if (line[i] === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 2;
        } else {
          quoted = !quoted;
          i += 1;
        }
      } else {
        arg += line[i];
        i += 1;
      }
    }
    args.push(arg);
  }
  return args;
}

/** Decodes a task file by its byte-order mark, and checks the declaration names that encoding. */
export function decodeTaskFile(bytes: Buffer): string {
  let encoding: 'UTF-16' | 'UTF-8';
  let text: string;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    encoding = 'UTF-16';
    text = bytes.subarray(2).toString('utf16le');
  } else if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    encoding = 'UTF-8';
    text = bytes.subarray(3).toString('utf8');
  } else {
    encoding = 'UTF-8';
    text = bytes.toString('utf8');
  }
  const declared = /^<\?xml[^>]*encoding=["']([^"']+)["']/.exec(text)?.[1]?.toUpperCase();
  if (
    declared !== undefined &&
    declared !== encoding &&
    !(declared === 'UTF8' && encoding === 'UTF-8')
  ) {
    throw new XmlError(
      `the declaration says ${declared} but the file is ${encoding}: switch from current encoding to specified encoding not supported`,
      1,
      1,
    );
  }
  return text;
}

export interface TaskDefinition {
  readonly command: string;
  readonly args: readonly string[];
  readonly arguments: string;
  readonly workingDirectory: string | null;
  readonly enabled: boolean;
  readonly description: string;
  readonly logonType: string;
}

/**
 * The environment a started task gets: the user's logon environment, approximated as the
 * caller's without what a shell session sets for fleet (`FLEET_*`, `XDG_*`): Task Scheduler does
 * not hand the `/Run` caller's environment to the task.
 */
export function logonEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(runtimeEnv(env))) {
    if (!key.startsWith('FLEET_') && !key.startsWith('XDG_')) out[key] = value;
  }
  return out;
}

/** Checks a task document against what the Task Scheduler schema requires; returns its Exec action. */
export function validateTask(xml: string): TaskDefinition {
  const { root } = parseXml(xml);
  const missing = (element: XmlElement, what: string) =>
    new XmlError(`${what}: missing a required element or attribute`, element.line, 1);
  if (root.name !== 'Task')
    throw new XmlError(`the root element is <${root.name}>, not <Task>`, root.line, 1);
  if (root.attributes['xmlns'] !== TASK_NAMESPACE)
    throw new XmlError('Task: not in the Task Scheduler namespace', root.line, 1);
  if (!/^1\.[1-6]$/.test(root.attributes['version'] ?? ''))
    throw new XmlError('Task: version must be 1.1 … 1.6', root.line, 1);
  const seen = new Set<string>();
  for (const element of root.children) {
    if (!TASK_CHILDREN.has(element.name))
      throw new XmlError(`Task: unexpected element <${element.name}>`, element.line, 1);
    if (seen.has(element.name))
      throw new XmlError(`Task: <${element.name}> appears twice`, element.line, 1);
    seen.add(element.name);
  }
  for (const name of ['RegistrationInfo', 'Triggers', 'Principals', 'Settings', 'Actions']) {
    if (!seen.has(name)) throw missing(root, `Task/${name}`);
  }
  // `<Triggers />` is an on-demand task (it runs on /Run only); anything in it is a trigger.
  const triggers = child(root, 'Triggers') as XmlElement;
  for (const trigger of triggers.children) {
    if (!TRIGGERS.has(trigger.name))
      throw new XmlError(`Triggers: <${trigger.name}> is not a trigger`, trigger.line, 1);
  }
  const principal = child(child(root, 'Principals'), 'Principal');
  if (!principal) throw missing(child(root, 'Principals') as XmlElement, 'Principals/Principal');
  const logonType = textAt(principal, 'LogonType') ?? 'InteractiveToken';
  if (!LOGON_TYPES.has(logonType))
    throw new XmlError(
      `Principal/LogonType: "${logonType}" is not a logon type`,
      principal.line,
      1,
    );
  const settings = child(root, 'Settings') as XmlElement;
  checkSettings(settings);
  checkPrincipals(child(root, 'Principals') as XmlElement, child(root, 'Actions') as XmlElement);
  const enabledText = textAt(settings, 'Enabled') ?? 'true';
  if (enabledText !== 'true' && enabledText !== 'false')
    throw new XmlError('Settings/Enabled must be true or false', settings.line, 1);
  const actions = child(root, 'Actions') as XmlElement;
  const execs = actions.children.filter((a) => a.name === 'Exec');
  if (execs.length !== 1) throw missing(actions, 'Actions/Exec (exactly one, for this fake)');
  const exec = execs[0] as XmlElement;
  checkExec(exec);
  const command = textAt(exec, 'Command');
  if (!command) throw missing(exec, 'Exec/Command');
  const argumentsText = textAt(exec, 'Arguments') ?? '';
  checkCommandLine(exec, command, argumentsText);
  return {
    command,
    args: splitWindowsArguments(argumentsText),
    arguments: argumentsText,
    workingDirectory: textAt(exec, 'WorkingDirectory') ?? null,
    enabled: enabledText === 'true',
    description: textAt(root, 'RegistrationInfo', 'Description') ?? '',
    logonType,
  };
}

/** `/SWITCH value` pairs and bare switches, with their case folded. */
function parseSwitches(argv: readonly string[]): Map<string, string | true> | null {
  const switches = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (!arg.startsWith('/')) return null;
    const name = arg.toUpperCase();
    if (switches.has(name)) return null;
    // `/XML FILE` under /Create (FILE may start with "/" on the Linux machines the fake runs on);
    // a bare `/XML` under /Query.
    const creating = argv.some((a) => a.toUpperCase() === '/CREATE');
    const takesValue = ['/TN', '/FO'].includes(name) || (name === '/XML' && creating);
    const value = argv[i + 1];
    if (takesValue && value !== undefined) {
      switches.set(name, value);
      i += 1;
    } else switches.set(name, true);
  }
  return switches;
}

const invalid = (argv: readonly string[]): CliResult =>
  fail(1, `ERROR: Invalid argument/option - '${argv.join(' ')}'.\nType "SCHTASKS /?" for usage.`);

const shape = (
  switches: Map<string, string | true>,
  allowed: string[],
  required: string[],
): boolean =>
  [...switches.keys()].every((k) => allowed.includes(k)) && required.every((k) => switches.has(k));

function loadTask(env: Env, name: string): TaskRecord | null {
  return readJson<TaskRecord | null>(taskPath(env, name), null);
}

async function run(env: Env, task: TaskRecord): Promise<CliResult> {
  const definition = validateTask(task.xml);
  const message = `SUCCESS: Attempted to run the scheduled task "${displayName(task.name)}".\n`;
  if (!definition.enabled) return fail(1, 'ERROR: The task has been disabled.');
  const key = taskKey(task.name);
  task.lastRunTime = new Date().toISOString();
  if (isRunning(readRun(schtasksDir(env), key))) return ok(message); // MultipleInstancesPolicy IgnoreNew
  if (activeFaults(env).has('start-fails')) {
    task.lastResult = FILE_NOT_FOUND;
    writeJson(taskPath(env, task.name), task);
    return ok(message);
  }
  const started = await startRun(schtasksDir(env), key, {
    command: definition.command,
    args: definition.args,
    env: logonEnv(env),
    cwd: definition.workingDirectory ?? env['HOME'] ?? '/',
    execFailureCode: FILE_NOT_FOUND,
  });
  task.lastResult = started.state === 'running' ? RUNNING : (started.exitCode ?? FILE_NOT_FOUND);
  writeJson(taskPath(env, task.name), task);
  return ok(message);
}

function statusOf(env: Env, task: TaskRecord): { status: string; lastResult: number } {
  const definition = validateTask(task.xml);
  const current = readRun(schtasksDir(env), taskKey(task.name));
  if (isRunning(current)) return { status: 'Running', lastResult: RUNNING };
  const lastResult =
    current?.state === 'exited' && task.lastResult === RUNNING
      ? (current.exitCode ?? 1)
      : task.lastResult;
  return { status: definition.enabled ? 'Ready' : 'Disabled', lastResult };
}

export async function schtasks(argv: string[], env: Env): Promise<CliResult> {
  logCall(schtasksDir(env), ['schtasks', ...argv]);
  const switches = parseSwitches(argv);
  if (!switches) return invalid(argv);
  const name = switches.get('/TN');
  if (typeof name !== 'string' || name.trim() === '') return invalid(argv);
  const notFound = fail(1, 'ERROR: The system cannot find the file specified.');

  if (switches.has('/CREATE')) {
    if (!shape(switches, ['/CREATE', '/XML', '/TN', '/F'], ['/XML'])) return invalid(argv);
    const file = switches.get('/XML');
    if (typeof file !== 'string') return invalid(argv);
    if (loadTask(env, name) && !switches.has('/F'))
      return fail(1, 'ERROR: Cannot create a file when that file already exists.');
    let xml: string;
    try {
      xml = decodeTaskFile(readFileSync(file));
      validateTask(xml);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return notFound;
      if (error instanceof XmlError)
        return fail(1, `ERROR: The task XML is malformed.\n${error.message}`);
      throw error;
    }
    const previous = loadTask(env, name);
    writeJson(taskPath(env, name), {
      name: name.replace(/^\\+/, ''),
      xml,
      registeredAt: new Date().toISOString(),
      lastRunTime: previous?.lastRunTime ?? null,
      lastResult: previous?.lastResult ?? NEVER_RAN,
    } satisfies TaskRecord);
    return ok(
      `SUCCESS: The scheduled task "${name.replace(/^\\+/, '')}" has successfully been created.\n`,
    );
  }
  const task = loadTask(env, name);
  if (switches.has('/RUN')) {
    if (!shape(switches, ['/RUN', '/TN'], [])) return invalid(argv);
    return task ? run(env, task) : notFound;
  }
  if (switches.has('/END')) {
    if (!shape(switches, ['/END', '/TN'], [])) return invalid(argv);
    if (!task) return notFound;
    const key = taskKey(task.name);
    if (!isRunning(readRun(schtasksDir(env), key)))
      return fail(1, 'ERROR: The task is not running.');
    const ended = await stopRun(schtasksDir(env), key, 5_000);
    task.lastResult = ended?.exitCode ?? 1;
    writeJson(taskPath(env, task.name), task);
    return ok(
      `SUCCESS: The scheduled task "${displayName(task.name)}" has been terminated successfully.\n`,
    );
  }
  if (switches.has('/QUERY')) {
    if (switches.has('/XML')) {
      if (!shape(switches, ['/QUERY', '/TN', '/XML'], []) || switches.get('/XML') !== true)
        return invalid(argv);
      return task ? ok(task.xml.endsWith('\n') ? task.xml : `${task.xml}\n`) : notFound;
    }
    if (!shape(switches, ['/QUERY', '/TN', '/FO', '/V'], ['/FO', '/V'])) return invalid(argv);
    if (String(switches.get('/FO')).toUpperCase() !== 'LIST') return invalid(argv);
    if (!task) return notFound;
    const definition = validateTask(task.xml);
    const { status, lastResult } = statusOf(env, task);
    const rows: [string, string][] = [
      ['HostName', hostname().toUpperCase()],
      ['TaskName', displayName(task.name)],
      ['Next Run Time', 'N/A'],
      ['Status', status],
      [
        'Logon Mode',
        definition.logonType === 'InteractiveToken' ? 'Interactive only' : 'Interactive/Background',
      ],
      ['Last Run Time', task.lastRunTime ?? '11/30/1999 12:00:00 AM'],
      ['Last Result', String(lastResult)],
      ['Author', 'fleet'],
      ['Task To Run', `${definition.command} ${definition.arguments}`.trim()],
      ['Start In', definition.workingDirectory ?? 'N/A'],
      ['Comment', definition.description || 'N/A'],
      ['Scheduled Task State', definition.enabled ? 'Enabled' : 'Disabled'],
      ['Schedule Type', 'At logon time'],
    ];
    return ok(`\nFolder: \\\n${rows.map(([k, v]) => `${`${k}:`.padEnd(38)}${v}`).join('\n')}\n`);
  }
  return invalid(argv);
}
