/**
 * The task document the fake `schtasks` registers (see schtasks.ts): its encoding, the elements
 * and attributes the Task Scheduler schema requires (the rest in task-schema.ts), and the
 * command line of its `Actions/Exec`, split with the Windows command-line rules.
 */
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
