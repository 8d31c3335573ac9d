/**
 * The runtime runner runs from `@fleet/controller`'s own entry, as the controller does
 * (controller-entry.test.ts): `bin/run.js controller runtime-run …` hands over before oclif is
 * imported, so the process that carries every upgrade, rollback and resume (contract §12) loads
 * neither oclif nor the CLI's commands, nor a plugin from oclif's data directory. Its flags are
 * the oclif command's (which still serves `--help`), and a bad one is `USAGE`, exit 2.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isFleetError } from '@fleet/core';
import { parseRuntimeRunFlags } from '@fleet/controller/runtime-run';
import { ROOT, tempDir } from '../src/fleet.js';

const CLI = join(ROOT, 'packages', 'cli', 'bin', 'run.js');
const TRACER = pathToFileURL(join(ROOT, 'bench', 'trace-imports.mjs')).href;

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  const child = spawn(process.execPath, ['--import', TRACER, CLI, ...args], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

function tracedUrls(trace: string): string[] {
  return readFileSync(trace, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((text) => (JSON.parse(text) as { url?: string }).url)
    .filter((url): url is string => url !== undefined);
}

describe('controller runtime-run: its own entry', function () {
  this.timeout(60_000);
  let dir: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    dir = await tempDir('fleet-runtime-run-entry-');
  });
  after(() => dir?.cleanup());

  it('accepts each flag `fleet controller runtime-run --help` documents', async () => {
    const command = (
      (await import(
        pathToFileURL(join(ROOT, 'packages/cli/dist/src/commands/controller/runtime-run.js')).href
      )) as { default: { flags: Record<string, unknown> } }
    ).default;
    const values: Record<string, string> = {
      home: dir.path,
      'log-file': join(dir.path, 'runner.log'),
      mode: 'activate',
      transaction: 'txn-1',
      'acceptance-timeout-ms': '5000',
      'go-file': join(dir.path, 'runner.go'),
      'wait-pid': '4242',
      'pid-file': join(dir.path, 'runner.pid'),
    };
    const argv = Object.keys(command.flags).flatMap((name) => {
      expect(values, `a value for --${name}`).to.have.property(name);
      return [`--${name}`, values[name] as string];
    });
    expect(await parseRuntimeRunFlags(argv)).to.deep.equal({
      home: dir.path,
      mode: 'activate',
      transaction: 'txn-1',
      acceptanceTimeoutMs: 5000,
      goFile: values['go-file'],
      waitPid: 4242,
      pidFile: values['pid-file'],
      logFile: values['log-file'],
    });
  });

  const refusals: ReadonlyArray<[string, string[], RegExp]> = [
    ['no --mode', ['--transaction', 't'], /^Missing required flag --mode$/],
    ['an unknown mode', ['--mode', 'upgrade', '--transaction', 't'], /^--mode must be one of/],
    [
      'a timeout below a second',
      ['--mode', 'activate', '--transaction', 't', '--acceptance-timeout-ms', '999'],
      /^--acceptance-timeout-ms must be an integer from 1000 to 600000/,
    ],
    [
      'a pid that is not a number',
      ['--mode', 'activate', '--transaction', 't', '--wait-pid', '12x'],
      /^--wait-pid must be an integer/,
    ],
    [
      'an unknown flag',
      ['--mode', 'activate', '--transaction', 't', '--force'],
      /^Nonexistent flag/,
    ],
  ];
  for (const [name, argv, message] of refusals) {
    it(`refuses ${name}: USAGE, exit 2`, async () => {
      const error: unknown = await parseRuntimeRunFlags(['--home', dir.path, ...argv]).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isFleetError(error), String(error)).to.equal(true);
      if (!isFleetError(error)) return;
      expect(error.code).to.equal('USAGE');
      expect(error.exitCode).to.equal(2);
      expect(error.message).to.match(message);
    });
  }

  it('runs from bin/run.js without oclif: nothing to resume is exit 3, said on stderr', async () => {
    const home = join(dir.path, 'home');
    await mkdir(home, { recursive: true });
    const trace = join(dir.path, 'trace.jsonl');
    const log = join(dir.path, 'resume.log');
    const exit = await runCli(
      [
        'controller',
        'runtime-run',
        '--home',
        home,
        '--mode',
        'resume',
        '--transaction',
        'txn-gone',
        '--log-file',
        log,
      ],
      { HOME: home, FLEET_TRACE_IMPORTS: trace },
    );
    // A line of its own: Node.js 26 warns on stderr that the import tracer's module.register() is
    // deprecated.
    expect(exit.stderr).to.match(/^Error: transaction txn-gone is not open past "activated"/m);
    expect(exit.code, exit.stderr).to.equal(3);
    // Nothing to wait for (no --go-file, no --wait-pid): it begins at once, its wait ended by time.
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines[0]).to.match(/\] runner \d+: resume txn-gone \(timeout\)$/);
    expect(lines[1]).to.match(/\] runner failed: transaction txn-gone is not open/);
    const urls = tracedUrls(trace);
    expect(
      urls.some((url) => url.endsWith('/packages/controller/dist/src/serve/runtime-run.js')),
    ).to.equal(true);
    expect(urls.filter((url) => url.includes('/@oclif/'))).to.deep.equal([]);
    expect(
      urls.filter((url) => /\/packages\/cli\/dist\/src\/(?:commands|base-command)/.test(url)),
    ).to.deep.equal([]);
    // Nor the controller's HTTP server: the runner is a client of the runtime it accepts.
    expect(urls.filter((url) => url.includes('/packages/controller/dist/src/http/'))).to.deep.equal(
      [],
    );
  });

  it('--help is still oclif`s', async () => {
    const exit = await runCli(['controller', 'runtime-run', '--help'], {
      HOME: dir.path,
      FLEET_TRACE_IMPORTS: join(dir.path, 'help-trace.jsonl'),
    });
    expect(exit.code, exit.stderr).to.equal(0);
    expect(exit.stdout).to.include('--transaction');
  });
});
