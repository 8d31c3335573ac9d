/**
 * `.ci/run`'s reading of mocha's output: `source .ci/run` defines its functions without running
 * anything, so each is run here with bash over a log written by the test. The counts decide
 * whether CI passes; the failure list is what the last screen of a failed run shows for every
 * run, not only the last one.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../src/fleet.js';

const FAILED_RUN = [
  '  \u001b[32m✔\u001b[39m a test whose title says 7 passing (1s)',
  '',
  '  2394 passing (23m)',
  '  3 pending',
  '  2 failing',
  '',
  '  1) fake supervisors (executables on PATH)',
  '       ends a run whose fake state is removed:',
  '',
  '      the monitor outlived its state',
  '      at Context.<anonymous> (file:///x/fake-supervisors.test.js:142:87)',
  '',
  '  2) a suite',
  '       "before all" hook for "a test":',
  '     Error: Timeout of 20000ms exceeded.',
  '      at listOnTimeout (node:internal/timers:573:17)',
  '',
  '=============================== Coverage summary ===============================',
  'Statements   : 94.05% ( 44071/46857 )',
  '',
].join('\n');

describe('.ci/run reads mocha’s output', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-ci-run-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `source .ci/run; <script>` with bash, `$1` the log; returns its stdout. */
  function ciRun(script: string, log: string): string {
    const path = join(dir, 'test.log');
    writeFileSync(path, log);
    const result = spawnSync('bash', ['-c', `source .ci/run; ${script}`, 'bash', path], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).to.equal(0);
    return result.stdout.replaceAll(path, 'LOG');
  }

  it('counts passing, failing and pending from the summary, never from a title', () => {
    expect(ciRun('parse_counts "$1"', FAILED_RUN)).to.equal('2394 2 3 1\n');
    expect(ciRun('parse_counts "$1"', '  12 passing (3s)\n')).to.equal('12 0 0 1\n');
    expect(ciRun('parse_counts "$1"', 'npm ERR! build failed\n')).to.equal('0 0 0 0\n');
  });

  it('lists each failure without stack frames, and nothing for a run without any', () => {
    expect(ciRun('print_failures "node v20" "$1"', FAILED_RUN)).to.equal(
      [
        'node v20: failures:',
        '    1) fake supervisors (executables on PATH)',
        '         ends a run whose fake state is removed:',
        '        the monitor outlived its state',
        '    2) a suite',
        '         "before all" hook for "a test":',
        '       Error: Timeout of 20000ms exceeded.',
        '',
      ].join('\n'),
    );
    expect(ciRun('print_failures "node v24" "$1"', '  12 passing (3s)\n')).to.equal('');
  });

  it('cuts a long list, saying how much more the log holds', () => {
    expect(ciRun('print_failures "node v20" "$1" 2', FAILED_RUN)).to.match(
      /^node v20: failures:\n {4}1\) fake supervisors.*\n.*ends a run.*\n {2}… 4 more lines in LOG\n$/,
    );
  });
});

describe('.ci/run times its phases', () => {
  it('prints the wall time of each phase and the total, in minutes and seconds', () => {
    // bash's SECONDS is assignable: the test sets the clock instead of waiting on it.
    const script = [
      'source .ci/run',
      'SECONDS=0; phase "system packages"',
      'SECONDS=75; phase "whole suite (npm test) on node v26.1.0"',
      'SECONDS=1290; phase ""',
      'print_phases',
    ].join('\n');
    const result = spawnSync('bash', ['-c', script], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stdout.split('\n')).to.deep.equal([
      '=== system packages',
      '=== whole suite (npm test) on node v26.1.0',
      'wall time per phase:',
      `  ${'system packages'.padEnd(44)}   1:15`,
      `  ${'whole suite (npm test) on node v26.1.0'.padEnd(44)}  20:15`,
      `  ${'total'.padEnd(44)}  21:30`,
      '',
    ]);
  });
});
