/**
 * The generated task XML (pure): well-formed, UTF-16 as declared, carrying the elements the Task
 * Scheduler schema requires, and read back — by the adapter and by the fake schtasks'
 * independent parser — to the exact argv.
 */
import { expect } from 'chai';
import { CONTROLLER_NODE_OPTIONS, encodeDefinition, runtimeCommand } from '@fleet/core';
import {
  decodeTaskFile,
  parseXml,
  splitWindowsArguments as fakeSplit,
  validateTask,
  xmlChild,
  xmlText,
} from '@fleet/testkit';
import { quoteWindowsArgument, readTask, splitWindowsArguments, taskXml } from '../src/task-xml.js';

const BUILD = 'cd'.repeat(32);
const HOME = 'C:\\Users\\Alice Smith';
const NODE = 'C:\\Program Files\\nodejs\\node.exe';
const GEN = `${HOME}\\AppData\\Local\\fleet\\runtime\\generations\\${BUILD}`;
const command = (nodeId = 'node-01') =>
  runtimeCommand({ nodePath: NODE, generationDir: GEN, home: HOME, nodeId, port: 7701 });
const task = (nodeId = 'node-01') => taskXml({ home: HOME, nodeId, command: command(nodeId) });

describe('task scheduler XML: generation', () => {
  it('is well-formed, declares UTF-16 and is written UTF-16LE with a byte-order mark', () => {
    const definition = task();
    expect(definition.path).to.equal('~/AppData/Local/fleet/supervisor/fleet-controller.xml');
    expect(definition.encoding).to.equal('utf16le');
    const parsed = parseXml(definition.content);
    expect(parsed.declaration).to.deep.equal({ version: '1.0', encoding: 'UTF-16' });
    const bytes = encodeDefinition(definition);
    expect([...bytes.subarray(0, 4)]).to.deep.equal([0xff, 0xfe, 0x3c, 0x00]);
    expect(decodeTaskFile(bytes)).to.equal(definition.content);
  });

  it("carries the schema's required elements: Task version, RegistrationInfo, a logon trigger, Principals, Settings, Actions/Exec", () => {
    const { root } = parseXml(task().content);
    expect([root.name, root.attributes['version'], root.attributes['xmlns']]).to.deep.equal([
      'Task',
      '1.2',
      'http://schemas.microsoft.com/windows/2004/02/mit/task',
    ]);
    expect(root.children.map((c) => c.name)).to.deep.equal([
      'RegistrationInfo',
      'Triggers',
      'Principals',
      'Settings',
      'Actions',
    ]);
    expect(xmlChild(xmlChild(root, 'Triggers'), 'LogonTrigger')).to.not.equal(undefined);
    expect(xmlText(root, 'Principals', 'Principal', 'LogonType')).to.equal('InteractiveToken');
    expect(xmlText(root, 'Settings', 'MultipleInstancesPolicy')).to.equal('IgnoreNew');
    expect(xmlText(root, 'Settings', 'ExecutionTimeLimit')).to.equal('PT0S');
    expect(xmlText(root, 'Actions', 'Exec', 'Command')).to.equal(NODE);
    expect(xmlText(root, 'Actions', 'Exec', 'Arguments')).to.equal(
      `${CONTROLLER_NODE_OPTIONS.join(' ')} "${GEN}\\package\\bin\\run.js" controller serve --home "${HOME}" --node-id node-01 --port 7701`,
    );
    const definition = validateTask(task().content);
    expect([definition.command, ...definition.args]).to.deep.equal(command());
  });

  it('the fake schtasks refuses a document missing any required element (the check has teeth)', () => {
    const content = task().content;
    for (const element of ['RegistrationInfo', 'Triggers', 'Principals', 'Settings', 'Actions']) {
      const without = content.replace(new RegExp(`<${element}[\\s\\S]*?</${element}>`), '');
      expect(() => validateTask(without), element).to.throw(new RegExp(element));
    }
    expect(() => validateTask(content.replace('</Task>', ''))).to.throw(/never closed/);
    expect(() => validateTask(content.replace('&quot;', '&bogus;'))).to.throw();
  });

  it('offers a boot trigger and a named user', () => {
    const { root } = parseXml(
      taskXml(
        { home: HOME, nodeId: 'node-01', command: command() },
        { trigger: 'boot', userId: 'FLEET\\alice' },
      ).content,
    );
    expect(xmlChild(xmlChild(root, 'Triggers'), 'BootTrigger')).to.not.equal(undefined);
    expect(xmlText(root, 'Principals', 'Principal', 'UserId')).to.equal('FLEET\\alice');
  });

  const tricky = [
    'plain',
    'with space',
    'say "hi"',
    'trailing\\',
    'C:\\dir with space\\',
    'a\\\\"b',
    '',
    '<&>',
  ];
  it('quotes arguments by the Windows rules: both readers give back the exact argv', () => {
    for (const arg of tricky) {
      expect(splitWindowsArguments(quoteWindowsArgument(arg)), arg).to.deep.equal([arg]);
      expect(fakeSplit(quoteWindowsArgument(arg)), arg).to.deep.equal([arg]);
    }
    const argv = [NODE, ...tricky];
    const content = taskXml({ home: HOME, nodeId: 'node-01', command: argv }).content;
    expect(readTask(content).command).to.deep.equal(argv);
    const fake = validateTask(content);
    expect([fake.command, ...fake.args]).to.deep.equal(argv);
  });

  it('reads back the generation and the --node-id', () => {
    expect(readTask(task('node-07').content)).to.deep.include({
      generation: BUILD,
      nodeIdFlag: 'node-07',
      enabled: true,
    });
  });

  for (const [what, input] of [
    [
      'environment variables (a task action has none)',
      { home: HOME, nodeId: 'node-01', command: command(), environment: { A: '1' } },
    ],
    [
      'a "%" Task Scheduler would expand',
      { home: HOME, nodeId: 'node-01', command: [NODE, '%USERPROFILE%'] },
    ],
    ['a line break', { home: HOME, nodeId: 'node-01', command: [NODE, 'a\nb'] }],
    [
      'a node id that is not one',
      { home: HOME, nodeId: 'x</Description><Evil/>', command: command() },
    ],
  ] as const) {
    it(`refuses ${what}`, () => {
      expect(() => taskXml(input)).to.throw(/scheduled task:/);
    });
  }
});
