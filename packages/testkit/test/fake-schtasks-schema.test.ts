/**
 * The fake `schtasks` validates a task document as Task Scheduler does (task-schema.ts cites the
 * schema and CreateProcessW): a table of documents it must refuse at `/Create`, each with the
 * schema rule that refuses it, and the documents fleet generates, which it must accept.
 */
import { expect } from 'chai';
import { validateTask, XmlError } from '../src/index.js';

const TASK = (parts: { settings?: string; exec?: string; principals?: string; context?: string }) =>
  `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo><Description>demo</Description></RegistrationInfo>
  <Triggers />
  <Principals>${parts.principals ?? '<Principal id="Author"><LogonType>InteractiveToken</LogonType></Principal>'}</Principals>
  <Settings>${parts.settings ?? '<Enabled>true</Enabled><ExecutionTimeLimit>PT2H</ExecutionTimeLimit><Priority>7</Priority>'}</Settings>
  <Actions Context="${parts.context ?? 'Author'}"><Exec>${parts.exec ?? '<Command>C:\\node\\node.exe</Command><Arguments>run.js</Arguments>'}</Exec></Actions>
</Task>
`;

function refusal(xml: string): string {
  try {
    validateTask(xml);
  } catch (error) {
    expect(error).to.be.instanceOf(XmlError);
    return (error as Error).message;
  }
  throw new Error('expected the fake to refuse the document');
}

describe('fake schtasks: the Task Scheduler schema', () => {
  it('accepts a document within the schema, its elements in any order (xs:all)', () => {
    const task = validateTask(
      TASK({
        settings:
          '<Priority>10</Priority><Hidden>1</Hidden><MultipleInstancesPolicy>Queue</MultipleInstancesPolicy><DeleteExpiredTaskAfter>P1DT2H</DeleteExpiredTaskAfter>',
        exec: '<WorkingDirectory>C:\\w</WorkingDirectory><Arguments>a "b c"</Arguments><Command>C:\\x.exe</Command>',
      }),
    );
    expect(task.args).to.deep.equal(['a', 'b c']);
    expect(task.workingDirectory).to.equal('C:\\w');
  });

  const refused: [string, Parameters<typeof TASK>[0], RegExp][] = [
    [
      'an unknown setting',
      { settings: '<Bogus>1</Bogus>' },
      /Settings: unexpected element <Bogus>/,
    ],
    [
      'a setting twice',
      { settings: '<Hidden>true</Hidden><Hidden>false</Hidden>' },
      /appears twice/,
    ],
    ['a boolean that is not one', { settings: '<Hidden>yes</Hidden>' }, /"yes" is not a boolean/],
    [
      'a duration that is not one',
      { settings: '<ExecutionTimeLimit>2h</ExecutionTimeLimit>' },
      /not a duration/,
    ],
    [
      'an empty duration',
      { settings: '<ExecutionTimeLimit>PT</ExecutionTimeLimit>' },
      /not a duration/,
    ],
    ['a priority above 10', { settings: '<Priority>11</Priority>' }, /not a priority/],
    [
      'an unknown instances policy',
      { settings: '<MultipleInstancesPolicy>Many</MultipleInstancesPolicy>' },
      /multiple-instances policy/,
    ],
    [
      'Arguments twice',
      { exec: '<Command>C:\\x.exe</Command><Arguments>a</Arguments><Arguments>b</Arguments>' },
      /Exec: <Arguments> appears twice/,
    ],
    [
      'a Command of 260 characters',
      { exec: `<Command>C:\\${'x'.repeat(253)}.exe</Command>` },
      /Exec\/Command: 260 characters, a path must be less than 260/,
    ],
    [
      'a WorkingDirectory of 300 characters',
      {
        exec: `<Command>C:\\x.exe</Command><WorkingDirectory>C:\\${'w'.repeat(297)}</WorkingDirectory>`,
      },
      /Exec\/WorkingDirectory: 300 characters/,
    ],
    [
      'an empty WorkingDirectory',
      { exec: '<Command>C:\\x.exe</Command><WorkingDirectory></WorkingDirectory>' },
      /Exec\/WorkingDirectory: empty/,
    ],
    [
      'a command line past 32,767 characters',
      { exec: `<Command>C:\\x.exe</Command><Arguments>${'a'.repeat(32_756)}</Arguments>` },
      /32768 characters with its NUL, past CreateProcess's 32767/,
    ],
    [
      'an action Context naming no principal',
      { context: 'Someone' },
      /Actions Context "Someone" names no Principal id/,
    ],
    [
      'two principals with one id',
      { principals: '<Principal id="Author"/><Principal id="Author"/>' },
      /Principal id "Author" is not unique/,
    ],
  ];
  for (const [what, parts, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(refusal(TASK(parts))).to.match(message);
    });
  }

  it('takes a command line of exactly 32,767 characters with its NUL', () => {
    // `"C:\x.exe" ` is 11 characters; 11 + 32,755 + the NUL = 32,767.
    const exec = `<Command>C:\\x.exe</Command><Arguments>${'a'.repeat(32_755)}</Arguments>`;
    expect(validateTask(TASK({ exec })).args[0]).to.have.length(32_755);
  });
});
