/** The real NodeContext (contract §6): no shell, an explicit minimal environment, the env chain. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createNodeContext } from '../src/index.js';
import { parseDuration } from '../src/duration.js';

/**
 * Node itself copies NODE_V8_COVERAGE into every child it spawns while coverage is collected (c8
 * sets it for `npm test`): that is the test harness, not the runner leaking the environment.
 */
const notCoverage = (name: string): boolean => name !== 'NODE_V8_COVERAGE';

describe('createNodeContext', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-context-'));
  });
  after(async () => rm(home, { recursive: true, force: true }));

  it('runs processes without a shell and without inheriting the environment', async () => {
    process.env['FLEET_TEST_SECRET'] = 'must-not-leak';
    try {
      const ctx = createNodeContext({ home, nodeId: 'node-01' });
      const result = await ctx.processes.run({
        command: process.execPath,
        args: [
          '-e',
          'process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), env: process.env }))',
          '$(echo hi); echo pwned',
        ],
      });
      expect(result.exitCode).to.equal(0);
      const seen = JSON.parse(result.stdout) as { argv: string[]; env: Record<string, string> };
      expect(seen.argv).to.deep.equal(['$(echo hi); echo pwned']);
      expect(Object.keys(seen.env).filter(notCoverage).sort()).to.deep.equal([
        'HOME',
        'LANG',
        'PATH',
      ]);
      expect(seen.env['HOME']).to.equal(home);
      expect(result.stdout).to.not.contain('must-not-leak');
    } finally {
      delete process.env['FLEET_TEST_SECRET'];
    }
  });

  it('passes exactly the environment a request names, and reports exit codes and timeouts', async () => {
    const ctx = createNodeContext({ home, nodeId: 'node-01' });
    const env = await ctx.processes.run({
      command: process.execPath,
      args: ['-e', 'process.stdout.write(JSON.stringify(Object.keys(process.env)))'],
      env: { ONLY: '1' },
    });
    expect((JSON.parse(env.stdout) as string[]).filter(notCoverage)).to.deep.equal(['ONLY']);
    const failed = await ctx.processes.run({
      command: process.execPath,
      args: ['-e', 'process.exit(7)'],
    });
    expect([failed.exitCode, failed.timedOut]).to.deep.equal([7, false]);
    const slow = await ctx.processes.run({
      command: process.execPath,
      args: ['-e', 'setTimeout(() => {}, 60000)'],
      timeoutMs: 200,
    });
    expect(slow.timedOut).to.equal(true);
  });

  it('loads the env-file chain afresh', async () => {
    const ctx = createNodeContext({ home, nodeId: 'node-01' });
    expect((await ctx.secrets()).size).to.equal(0);
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(join(home, '.config', 'fleet'), { recursive: true });
    await writeFile(join(home, '.config', 'fleet', 'env'), 'A=1\n');
    expect((await ctx.secrets()).get('A')).to.equal('1');
  });

  it('parses token durations', () => {
    expect(parseDuration('90d')).to.equal(90 * 86_400_000);
    expect(parseDuration('1h30m')).to.equal(5_400_000);
    for (const bad of ['', '10', '5 m', '-1d', '0s', 'forever'])
      expect(() => parseDuration(bad), bad).to.throw();
  });
});
