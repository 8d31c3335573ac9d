/**
 * No test holds the process open (test/open-handles.mjs, loaded by .mocharc.json): a run whose
 * tests leave a timer or a server alive fails after its last test, naming each leftover and the
 * file that made it, and still ends at once; a run that cleans up passes. Each case runs mocha on
 * a test file written here, in a process of its own.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../src/fleet.js';

const MOCHA = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const HOOKS = join(ROOT, 'test', 'open-handles.mjs');

const CASES: ReadonlyArray<{
  readonly what: string;
  /** The bodies of the file's tests, in order. */
  readonly tests: readonly string[];
  /** The body of the file's `after` hook, if any. */
  readonly after?: string;
  readonly status: number;
  readonly names: readonly RegExp[];
}> = [
  {
    what: 'a test that cleans up',
    tests: [
      'const t = setTimeout(() => {}, 60_000); clearTimeout(t); const s = net.createServer().listen(0); await new Promise((r) => s.close(r));',
    ],
    status: 0,
    names: [],
  },
  {
    what: 'an unref()ed timer',
    tests: ['setTimeout(() => {}, 60_000).unref();'],
    status: 0,
    names: [],
  },
  {
    what: 'a timer of a minute',
    tests: ['setTimeout(function idleShutdown() {}, 60_000);'],
    status: 1,
    names: [/timer \(60000 ms, idleShutdown\) made in .*leaky\.test\.mjs$/m],
  },
  {
    what: "a timer made by a file's second test",
    tests: ['', 'setTimeout(function second() {}, 60_000);'],
    status: 1,
    names: [/timer \(60000 ms, second\) made in .*leaky\.test\.mjs$/m],
  },
  {
    what: 'an interval made in an after hook',
    tests: [''],
    after: 'setInterval(() => {}, 1000);',
    status: 1,
    names: [
      /timer \(1000 ms, an anonymous callback\) made in .*leaky\.test\.mjs \(after its last test\)$/m,
    ],
  },
  {
    what: 'a listening server',
    tests: ['net.createServer().listen(0, "127.0.0.1");'],
    status: 1,
    names: [/server listening on 127\.0\.0\.1:\d+/],
  },
];

describe('a test run that leaves something alive fails, and ends', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-open-handles-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const { what, tests, after: afterBody, status, names } of CASES) {
    it(`${what}: exit ${status}`, () => {
      const file = join(dir, 'leaky.test.mjs');
      const body = [
        ...tests.map((test, index) => `it('t${index + 1}', async () => { ${test} });`),
        ...(afterBody === undefined ? [] : [`after(() => { ${afterBody} });`]),
      ];
      writeFileSync(
        file,
        `import net from 'node:net';\ndescribe('s', () => {\n${body.join('\n')}\n});\n`,
      );
      const started = Date.now();
      const run = spawnSync(process.execPath, [MOCHA, '--require', HOOKS, file], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, FLEET_TEST_DRAIN_MS: '300' },
        timeout: 30_000,
      });
      const output = `${run.stdout}${run.stderr}`;
      expect(run.status, output).to.equal(status);
      // released after the report: the run ends within seconds, not after the timer's minute
      expect(Date.now() - started).to.be.below(20_000);
      for (const name of names) expect(output).to.match(name);
      if (status !== 0)
        expect(output).to.match(/keeping the process alive 300 ms after the last test/);
    });
  }
});
