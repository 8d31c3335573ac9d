/**
 * What the fake `schtasks /Create /XML` checks beyond the document's shape (task-document.ts), from
 * Microsoft's Task Scheduler schema (learn.microsoft.com/windows/win32/taskschd/task-scheduler-schema;
 * `schtasks /create /xml` registers a task "from the specified XML file", validated against it):
 *
 * - `settingsType` is an `xs:all` of known elements, each at most once, with typed values
 *   (`boolean`, `duration`, `priorityType` 0–10, `multipleInstancesPolicyType`);
 * - `execType` is an `xs:all` of `Command` (required), `Arguments`, `WorkingDirectory`, each at
 *   most once; `Command` and `WorkingDirectory` are `pathType`: "cannot be an empty string, and
 *   must be less than 260 characters" (maxLength 260);
 * - the `ContextKeyRef` keyref: `Actions/@Context` names the `id` of a `Principals/Principal`,
 *   and ids are unique (`UniqueId`);
 * - the command line Task Scheduler hands CreateProcess (`"Command" Arguments`) fits
 *   lpCommandLine's "maximum length of 32,767 characters, including the Unicode terminating null
 *   character" (CreateProcessW, learn.microsoft.com/windows/win32/api/processthreadsapi/
 *   nf-processthreadsapi-createprocessw). The real service accepts a longer one and fails each run;
 *   the fake refuses it at /Create — stricter, never laxer.
 */
import { textAt, XmlError, type XmlElement } from './xml.js';

const BOOLEAN_SETTINGS = new Set([
  'AllowStartOnDemand',
  'DisallowStartIfOnBatteries',
  'StopIfGoingOnBatteries',
  'AllowHardTerminate',
  'StartWhenAvailable',
  'RunOnlyIfNetworkAvailable',
  'WakeToRun',
  'Enabled',
  'Hidden',
  'RunOnlyIfIdle',
  'UseUnifiedSchedulingEngine',
  'DisallowStartOnRemoteAppSession',
]);
const DURATION_SETTINGS = new Set(['DeleteExpiredTaskAfter', 'ExecutionTimeLimit']);
const OTHER_SETTINGS = new Set([
  'RestartOnFailure',
  'MultipleInstancesPolicy',
  'NetworkProfileName',
  'IdleSettings',
  'NetworkSettings',
  'Priority',
]);
const INSTANCES_POLICIES = new Set(['Parallel', 'Queue', 'IgnoreNew', 'StopExisting']);
/** `xs:boolean`'s lexical space. */
const XS_BOOLEAN = new Set(['true', 'false', '1', '0']);
/** `xs:duration`: `PnYnMnDTnHnMnS`, at least one part, `T` only before a time part. */
const XS_DURATION = /^-?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;
/** `pathType`'s maxLength. */
export const TASK_PATH_MAX = 260;
/** CreateProcessW's lpCommandLine, the terminating NUL included. */
export const COMMAND_LINE_MAX = 32_767;

const schemaError = (element: XmlElement, message: string): XmlError =>
  new XmlError(message, element.line, 1);

/** Each child at most once (`xs:all`), and only the names `allowed` lists. */
function allOnce(parent: XmlElement, allowed: (name: string) => boolean): void {
  const seen = new Set<string>();
  for (const element of parent.children) {
    if (!allowed(element.name))
      throw schemaError(element, `${parent.name}: unexpected element <${element.name}>`);
    if (seen.has(element.name))
      throw schemaError(element, `${parent.name}: <${element.name}> appears twice`);
    seen.add(element.name);
  }
}

/** `settingsType`: known elements, each once, with values of their types. */
export function checkSettings(settings: XmlElement): void {
  allOnce(
    settings,
    (name) => BOOLEAN_SETTINGS.has(name) || DURATION_SETTINGS.has(name) || OTHER_SETTINGS.has(name),
  );
  for (const element of settings.children) {
    const value = element.text.trim();
    const bad = (type: string) =>
      schemaError(element, `Settings/${element.name}: "${value}" is not a ${type}`);
    if (BOOLEAN_SETTINGS.has(element.name) && !XS_BOOLEAN.has(value)) throw bad('boolean');
    if (DURATION_SETTINGS.has(element.name) && !XS_DURATION.test(value)) throw bad('duration');
    if (element.name === 'Priority' && !/^(?:[0-9]|10)$/.test(value)) throw bad('priority (0-10)');
    if (element.name === 'MultipleInstancesPolicy' && !INSTANCES_POLICIES.has(value))
      throw bad('multiple-instances policy');
  }
}

/** `execType`: Command (required), Arguments, WorkingDirectory, each once; paths within 260. */
export function checkExec(exec: XmlElement): void {
  allOnce(exec, (name) => ['Command', 'Arguments', 'WorkingDirectory'].includes(name));
  for (const name of ['Command', 'WorkingDirectory']) {
    const value = textAt(exec, name);
    if (value === undefined) continue;
    if (value === '') throw schemaError(exec, `Exec/${name}: empty`);
    if (value.length >= TASK_PATH_MAX)
      throw schemaError(
        exec,
        `Exec/${name}: ${value.length} characters, a path must be less than ${TASK_PATH_MAX}`,
      );
  }
}

/** The `ContextKeyRef` keyref and the `UniqueId` constraint over principals. */
export function checkPrincipals(principals: XmlElement, actions: XmlElement): void {
  const ids = new Set<string>();
  for (const principal of principals.children.filter((p) => p.name === 'Principal')) {
    const id = principal.attributes['id'];
    if (id === undefined) continue;
    if (ids.has(id)) throw schemaError(principal, `Principal id "${id}" is not unique`);
    ids.add(id);
  }
  const context = actions.attributes['Context'];
  if (context !== undefined && !ids.has(context))
    throw schemaError(actions, `Actions Context "${context}" names no Principal id`);
}

/**
 * The command line a task's action starts with: the command, quoted, then the arguments as
 * written (Task Scheduler passes `Arguments` through unparsed; the program's C runtime or
 * CommandLineToArgvW splits it).
 */
export function taskCommandLine(command: string, argumentsText: string): string {
  return argumentsText === '' ? `"${command}"` : `"${command}" ${argumentsText}`;
}

/** Refuses a command line past CreateProcessW's limit. */
export function checkCommandLine(exec: XmlElement, command: string, argumentsText: string): void {
  const length = taskCommandLine(command, argumentsText).length + 1;
  if (length > COMMAND_LINE_MAX)
    throw schemaError(
      exec,
      `Exec: the command line would be ${length} characters with its NUL, past CreateProcess's ${COMMAND_LINE_MAX}`,
    );
}
