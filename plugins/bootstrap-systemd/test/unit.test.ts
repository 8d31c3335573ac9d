/**
 * The generated user unit (pure), checked three ways: by its content, by `systemd-analyze verify`
 * (system and `--user` mode, no warning allowed), and by the fake systemctl's independent reading
 * of `ExecStart=`, which must give back the exact argv.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { CONTROLLER_NODE_OPTIONS, runtimeCommand } from '@fleet/core';
import {
  SYSTEM_TOOLS,
  parseExecStart,
  parseUnitFile,
  requireSystemTools,
  unitValue,
  unitValues,
} from '@fleet/testkit';
import { quoteWord, readUnit, systemdUnit, UNIT_NAME } from '../src/unit.js';

const run = promisify(execFile);
const BUILD = 'ab'.repeat(32);
const HOME = '/home/alice';
const GEN = `${HOME}/.local/share/fleet/runtime/generations/${BUILD}`;

/** Words that need quoting, escaping or both. */
const tricky = [
  '/opt/my node/bin/node',
  'with space',
  '100%',
  'cost $HOME',
  'say "hi"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '-leading-dash',
  '',
];

const command = (overrides: Partial<Parameters<typeof runtimeCommand>[0]> = {}) =>
  runtimeCommand({
    nodePath: process.execPath,
    generationDir: GEN,
    home: HOME,
    nodeId: 'node-01',
    ...overrides,
  });

/** Runs `systemd-analyze verify` on `content` saved as fleet-controller.service in a temp dir. */
async function verify(content: string, user: boolean): Promise<{ code: number; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-unit-'));
  try {
    const runtime = join(dir, 'xdg-runtime');
    await mkdir(runtime, { mode: 0o700 });
    const file = join(dir, UNIT_NAME);
    await writeFile(file, content);
    const args = [...(user ? ['--user'] : []), 'verify', '--man=no', file];
    try {
      const { stderr } = await run('systemd-analyze', args, {
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', XDG_RUNTIME_DIR: runtime, HOME: dir },
      });
      return { code: 0, stderr };
    } catch (error) {
      const failure = error as { code?: number; stderr?: string };
      return {
        code: typeof failure.code === 'number' ? failure.code : -1,
        stderr: failure.stderr ?? String(error),
      };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('systemd user unit: generation', () => {
  it('runs the generation through the node binary with the flags, restarts on failure, starts at login', () => {
    const unit = systemdUnit({ home: HOME, nodeId: 'node-01', command: command({ port: 7701 }) });
    expect(unit.path).to.equal('~/.config/systemd/user/fleet-controller.service');
    expect(unit.encoding).to.equal('utf8');
    const parsed = parseUnitFile(unit.content);
    expect(unitValue(parsed, 'Unit', 'Description')).to.equal('fleet controller (node node-01)');
    expect(unitValue(parsed, 'Service', 'Type')).to.equal('exec');
    expect(unitValue(parsed, 'Service', 'ExecStart')).to.equal(
      `${process.execPath} ${CONTROLLER_NODE_OPTIONS.join(' ')} ${GEN}/package/bin/run.js controller serve --home ${HOME} --node-id node-01 --port 7701`,
    );
    expect(unitValue(parsed, 'Service', 'Restart')).to.equal('on-failure');
    expect(unitValue(parsed, 'Service', 'WorkingDirectory')).to.equal(HOME);
    expect(unitValues(parsed, 'Service', 'Environment')).to.deep.equal(['NODE_ENV=production']);
    expect(unitValue(parsed, 'Install', 'WantedBy')).to.equal('default.target');
  });

  it('is a pure function of its input', () => {
    const input = { home: HOME, nodeId: 'node-01', command: command() };
    expect(systemdUnit(input)).to.deep.equal(systemdUnit(input));
  });

  it('quotes every word so systemd and the fake give back the exact argv', () => {
    const argv = ['/usr/bin/node', ...tricky];
    const unit = systemdUnit({ home: HOME, nodeId: 'node-01', command: argv });
    const parsed = parseUnitFile(unit.content);
    expect(
      parseExecStart(unitValue(parsed, 'Service', 'ExecStart') as string, { h: HOME }, {}),
    ).to.deep.equal(argv);
    expect(readUnit(unit.content).command).to.deep.equal(argv);
  });

  it('escapes specifiers and variables: %% and $$', () => {
    expect(quoteWord('100%')).to.equal('100%%');
    expect(quoteWord('$HOME')).to.equal('"$$HOME"');
    expect(quoteWord('$HOME', false)).to.equal('"$HOME"');
    expect(quoteWord('plain/path-1.0')).to.equal('plain/path-1.0');
  });

  it('reads back the generation, --node-id and environment it was made with', () => {
    const unit = systemdUnit({
      home: HOME,
      nodeId: 'node-07',
      command: command({ nodeId: 'node-07' }),
      environment: { FLEET_LOG: 'debug mode' },
    });
    expect(readUnit(unit.content)).to.deep.include({
      generation: BUILD,
      nodeIdFlag: 'node-07',
      environment: { NODE_ENV: 'production', FLEET_LOG: 'debug mode' },
    });
  });

  for (const [what, input] of [
    ['a relative executable', { home: HOME, nodeId: 'node-01', command: ['node', 'run.js'] }],
    [
      'a node id that is not one',
      { home: HOME, nodeId: 'node 01\nExecStartPre=/bin/evil', command: command() },
    ],
    [
      'an environment name that is not one',
      { home: HOME, nodeId: 'node-01', command: command(), environment: { 'A B': 'x' } },
    ],
    [
      'a line break in the environment',
      { home: HOME, nodeId: 'node-01', command: command(), environment: { A: 'x\n[Service]' } },
    ],
    ['a relative home', { home: 'alice', nodeId: 'node-01', command: command() }],
  ] as const) {
    it(`refuses ${what}`, () => {
      expect(() => systemdUnit(input)).to.throw(/systemd unit:/);
    });
  }
});

describe('systemd user unit: systemd-analyze verify', function () {
  before(function () {
    requireSystemTools(
      this,
      [SYSTEM_TOOLS.systemdAnalyze],
      'generated units are checked with systemd-analyze verify',
    );
  });

  for (const user of [false, true]) {
    it(`passes with no warning at all${user ? ' (--user)' : ''}`, async () => {
      const unit = systemdUnit({
        home: HOME,
        nodeId: 'node-01',
        command: command({ port: 7701 }),
        environment: { FLEET_LOG: 'debug 100%' },
      });
      const result = await verify(unit.content, user);
      expect(result, result.stderr).to.deep.equal({ code: 0, stderr: '' });
    });
  }

  it('passes with the awkward words too', async () => {
    const unit = systemdUnit({
      home: HOME,
      nodeId: 'node-01',
      command: [process.execPath, ...tricky],
    });
    expect(await verify(unit.content, true)).to.deep.equal({ code: 0, stderr: '' });
  });

  it('has teeth: a unit with an unknown key, a bad value or a missing binary is reported', async () => {
    const good = systemdUnit({ home: HOME, nodeId: 'node-01', command: command() }).content;
    expect(
      (await verify(good.replace('Restart=on-failure', 'Restart=sometimes'), true)).stderr,
    ).to.match(/restart specifier/);
    expect((await verify(good.replace('UMask=0077', 'Frobnicate=yes'), true)).stderr).to.match(
      /Unknown key/,
    );
    const missing = await verify(
      systemdUnit({ home: HOME, nodeId: 'node-01', command: ['/nonexistent/node', 'x'] }).content,
      true,
    );
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.match(/is not executable/);
  });
});
