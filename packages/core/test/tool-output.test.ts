/**
 * A refused action's own words (issue 40, contract §7.1 `ACTION_FAILED`): the tail of what the
 * action printed — only where its node policy entry returns the output — is carried on the error
 * (`FleetError.toolOutput`), in `--json`'s envelope, and printed under the one-line error as
 * `  | ` lines. The tail is the last 20 lines, at most 2 KiB, cut after the output was redacted.
 */
import { expect } from 'chai';
import { failureLines } from '../src/command/base.js';
import { FleetError, errorEnvelope } from '../src/errors.js';
import { readableOutput } from '../src/installers/file-actions.js';
import type { ProcessRequest, ProcessResult } from '../src/interfaces/node-context.js';
import {
  TOOL_OUTPUT_BYTES,
  actionOutput,
  outputTail,
  policyActionRunner,
} from '../src/policy/actions.js';
import { nodePolicySchema } from '../src/policy/schema.js';

const numbered = (count: number, width = 0) =>
  Array.from({ length: count }, (_, i) => `line ${i + 1}`.padEnd(width, '.')).join('\n');
const bytes = (text: string | undefined) => Buffer.byteLength(text ?? '', 'utf8');

describe('outputTail: what of an action output the operator is shown', () => {
  const cases: readonly (readonly [string, string | undefined, string | undefined])[] = [
    ['no output returned (the policy keeps it on the node)', undefined, undefined],
    ['an empty output', '', undefined],
    ['only blank lines', '\n  \n', undefined],
    [
      'one line',
      'line 3: Bad configuration option: hostnme',
      'line 3: Bad configuration option: hostnme',
    ],
    ['several lines, trailing newlines dropped', 'a\nb\n\n', 'a\nb'],
    ['exactly 20 lines', numbered(20), numbered(20)],
    ['more than 20 lines: the last 20', numbered(25), numbered(25).split('\n').slice(5).join('\n')],
  ];
  for (const [what, output, expected] of cases) {
    it(what, () => {
      expect(outputTail(output)).to.equal(expected);
    });
  }

  it('drops whole lines from the start while the tail is over 2 KiB', () => {
    // 20 lines of 199 bytes: 10 of them and their newlines are 1999 bytes, 11 are 2199.
    const tail = outputTail(numbered(20, 199));
    expect(tail?.split('\n').map((line) => line.split('.')[0])).to.deep.equal(
      Array.from({ length: 10 }, (_, i) => `line ${i + 11}`),
    );
    expect(bytes(tail)).to.be.at.most(TOOL_OUTPUT_BYTES);
  });

  it('cuts a single line longer than 2 KiB to its end, marked with a leading …', () => {
    const tail = outputTail(`first\n${'x'.repeat(3000)}END`);
    expect(tail).to.match(/^…x+END$/);
    expect(bytes(tail)).to.equal(TOOL_OUTPUT_BYTES);
  });

  it('cuts a long line of multi-byte characters on a character boundary', () => {
    const tail = outputTail('é'.repeat(1500));
    expect(tail).to.match(/^…é+$/);
    expect(bytes(tail)).to.be.at.most(TOOL_OUTPUT_BYTES);
  });
});

describe("an action's output tail: redacted before it is cut", () => {
  const SECRET = 'hunter2-token-value-0123';
  const secrets = new Map([['API_TOKEN', SECRET]]);

  it('holds the placeholder, never the value, wherever the value was', () => {
    const stdout = `${numbered(30)}\ntoken = ${SECRET}\n`;
    const stderr = `line 31: ${SECRET} is not a valid option\n`;
    const tail = outputTail(actionOutput(stdout, stderr, secrets, 4096));
    expect(tail).to.not.contain(SECRET).and.not.contain('hunter2');
    expect(tail?.split('\n').slice(-2)).to.deep.equal([
      'token = {{ secret.API_TOKEN }}',
      'line 31: {{ secret.API_TOKEN }} is not a valid option',
    ]);
  });

  /** A node policy of one validate action, `output` as given, whose program prints `printed`. */
  async function runWith(output: 'return' | 'discard'): Promise<string | undefined> {
    const { domains } = nodePolicySchema.parse({
      version: 1,
      domains: {
        sshcfg: { actions: { check: { argv: ['/usr/bin/ssh', '-G', '-F', '{file}'], output } } },
      },
    });
    const processes = {
      run: (_request: ProcessRequest): Promise<ProcessResult> =>
        Promise.resolve({
          exitCode: 255,
          stdout: '',
          stderr: `/tmp/staged line 3: Bad configuration option: hostnme\n/tmp/staged: terminating, 1 bad configuration options\nkey ${SECRET}\n`,
          timedOut: false,
        }),
    };
    const runner = policyActionRunner(processes, () => Promise.resolve(secrets), {
      actions: domains['sshcfg']?.actions ?? {},
      domain: 'sshcfg',
      runs: [],
    });
    return outputTail((await runner.run('check', { file: '/tmp/staged' })).output);
  }

  it('is there only when the node policy returns the output (output: return)', async () => {
    expect(await runWith('return')).to.equal(
      [
        '/tmp/staged line 3: Bad configuration option: hostnme',
        '/tmp/staged: terminating, 1 bad configuration options',
        'key {{ secret.API_TOKEN }}',
      ].join('\n'),
    );
    expect(await runWith('discard')).to.equal(undefined);
  });
});

describe('an error with a tool output tail, as the operator sees it', () => {
  const refused = (toolOutput?: string) =>
    new FleetError(
      'ACTION_FAILED',
      'node-01: the validate action ssh-check refused the new ~/.ssh/config (action ssh-check (/usr/bin/ssh) exited 255: line 3: bad option)',
      toolOutput === undefined ? {} : { toolOutput },
    );

  it('--json: the envelope carries it as a field; none without it', () => {
    expect(errorEnvelope(refused('line 3: bad option\nterminating')).error).to.deep.equal({
      code: 'ACTION_FAILED',
      message: refused().message,
      exitCode: 6,
      toolOutput: 'line 3: bad option\nterminating',
    });
    expect(errorEnvelope(refused()).error).to.not.have.property('toolOutput');
  });

  it('stderr: the one-line error first, then each line of it as "  | ", control characters escaped', async () => {
    expect(await failureLines(refused('line 3: bad option\n\u001b[31mterminating'))).to.deep.equal([
      `Error: ${refused().message}`,
      '  | line 3: bad option',
      '  | \\x1b[31mterminating',
    ]);
    expect(await failureLines(refused())).to.deep.equal([`Error: ${refused().message}`]);
  });
});

describe('readableOutput: a validate tool names the file it would replace, without CRs', () => {
  const file = { staged: '/home/ana/.ssh/.fleet-tmp-01M9-0', path: '~/.ssh/config' };
  const cases: readonly (readonly [string, string | undefined, string | undefined])[] = [
    ['no output', undefined, undefined],
    [
      'the staged path, named by the target',
      '/home/ana/.ssh/.fleet-tmp-01M9-0: line 7: Bad configuration option: nosuchoption\n',
      '~/.ssh/config: line 7: Bad configuration option: nosuchoption\n',
    ],
    [
      'every occurrence',
      'reading /home/ana/.ssh/.fleet-tmp-01M9-0\n/home/ana/.ssh/.fleet-tmp-01M9-0: bad',
      'reading ~/.ssh/config\n~/.ssh/config: bad',
    ],
    ['CRLF line ends', 'one\r\ntwo\r\n', 'one\ntwo\n'],
    ['a CR at the very end', 'one\r', 'one'],
    ['a CR inside a line stays (a progress bar, not a line end)', 'a\rb\n', 'a\rb\n'],
  ];
  for (const [name, output, expected] of cases) {
    it(name, () => expect(readableOutput(output, file)).to.equal(expected));
  }

  it('leaves the output as it is when no file was checked (reload, restart)', () => {
    expect(readableOutput('/home/ana/.ssh/.fleet-tmp-01M9-0\r\n')).to.equal(
      '/home/ana/.ssh/.fleet-tmp-01M9-0\n',
    );
  });
});
