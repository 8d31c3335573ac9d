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
 * Scheduler checks them (task-document.ts and task-schema.ts, with the documents cited there).
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
import { decodeTaskFile, validateTask } from './task-document.js';
import { XmlError } from './xml.js';

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

/** One `schtasks` call as each of its forms sees it: the task's name (`/TN`) is already present. */
interface TaskCall {
  argv: string[];
  env: Env;
  name: string;
  switches: Map<string, string | true>;
}

const notFound = (): CliResult => fail(1, 'ERROR: The system cannot find the file specified.');

/** `/CREATE /XML FILE /TN NAME [/F]`: registers the task the file defines, if it is valid. */
function createTask({ argv, env, name, switches }: TaskCall): CliResult {
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
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return notFound();
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

/** `/END /TN NAME`: ends the running task's whole process tree. */
async function endTask(
  { argv, env, switches }: TaskCall,
  task: TaskRecord | null,
): Promise<CliResult> {
  if (!shape(switches, ['/END', '/TN'], [])) return invalid(argv);
  if (!task) return notFound();
  const key = taskKey(task.name);
  if (!isRunning(readRun(schtasksDir(env), key))) return fail(1, 'ERROR: The task is not running.');
  const ended = await stopRun(schtasksDir(env), key, 5_000);
  task.lastResult = ended?.exitCode ?? 1;
  writeJson(taskPath(env, task.name), task);
  return ok(
    `SUCCESS: The scheduled task "${displayName(task.name)}" has been terminated successfully.\n`,
  );
}

/** `/QUERY /TN NAME /XML` (the registered XML) or `/QUERY /TN NAME /FO LIST /V` (its status). */
function queryTask({ argv, env, switches }: TaskCall, task: TaskRecord | null): CliResult {
  if (switches.has('/XML')) {
    if (!shape(switches, ['/QUERY', '/TN', '/XML'], []) || switches.get('/XML') !== true)
      return invalid(argv);
    return task ? ok(task.xml.endsWith('\n') ? task.xml : `${task.xml}\n`) : notFound();
  }
  if (!shape(switches, ['/QUERY', '/TN', '/FO', '/V'], ['/FO', '/V'])) return invalid(argv);
  if (String(switches.get('/FO')).toUpperCase() !== 'LIST') return invalid(argv);
  if (!task) return notFound();
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

export async function schtasks(argv: string[], env: Env): Promise<CliResult> {
  logCall(schtasksDir(env), ['schtasks', ...argv]);
  const switches = parseSwitches(argv);
  if (!switches) return invalid(argv);
  const name = switches.get('/TN');
  if (typeof name !== 'string' || name.trim() === '') return invalid(argv);
  const call: TaskCall = { argv, env, name, switches };
  if (switches.has('/CREATE')) return createTask(call);
  const task = loadTask(env, name);
  if (switches.has('/RUN')) {
    if (!shape(switches, ['/RUN', '/TN'], [])) return invalid(argv);
    return task ? run(env, task) : notFound();
  }
  if (switches.has('/END')) return endTask(call, task);
  if (switches.has('/QUERY')) return queryTask(call, task);
  return invalid(argv);
}
