/**
 * The fake `launchctl`, run as the executable tests put on PATH: its plist reading agrees with
 * Python's plistlib, and it is as strict as launchd about loading, restarting and unloading a job
 * (launchd.plist(5), launchctl(1); see src/fake-supervisors/launchctl.ts).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from 'chai';
import {
  FAKE_SUPERVISOR_BIN,
  PlistError,
  parsePlist,
  processAlive,
  requireSystemTools,
  SYSTEM_TOOLS,
} from '../src/index.js';

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const run = (
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input?: string,
): Promise<Ran> =>
  new Promise((resolve) => {
    const child = execFile(command, args, { env }, (error, stdout, stderr) =>
      resolve({
        code: error ? (typeof error.code === 'number' ? error.code : -1) : 0,
        stdout,
        stderr,
      }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });

const xmlEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A job's plist, from its keys (the values as XML fragments). */
function plistOf(entries: Record<string, string>): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    ...Object.entries(entries).map(([key, value]) => `  <key>${key}</key>\n  ${value}`),
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
const str = (value: string) => `<string>${xmlEscape(value)}</string>`;
const arr = (values: string[]) => `<array>${values.map(str).join('')}</array>`;

describe('fake launchctl: plists read as plistlib reads them', function () {
  before(function () {
    requireSystemTools(this, [SYSTEM_TOOLS.python3], 'the plist cross-check uses plistlib');
  });

  const documents: Record<string, string> = {
    'a job with every kind of value': plistOf({
      Label: str('dev.fleet.demo'),
      ProgramArguments: arr(['/usr/bin/env', 'a & b', '<x>', 'ü']),
      StartInterval: '<integer>1800</integer>',
      RunAtLoad: '<true/>',
      KeepAlive: '<dict><key>SuccessfulExit</key><false/></dict>',
      EnvironmentVariables: `<dict><key>A</key>${str('1')}</dict>`,
      Negative: '<integer>-3</integer>',
    }),
    'an integer that is not a number': plistOf({ StartInterval: '<integer>abc</integer>' }),
    'a key without a value': '<plist version="1.0"><dict><key>Label</key></dict></plist>',
    'two values under <plist>': '<plist version="1.0"><dict/><dict/></plist>',
    'an unknown element': '<plist version="1.0"><dict><key>A</key><foo>1</foo></dict></plist>',
    'a mismatched tag': '<plist version="1.0"><dict><key>A</key><string>x</dict></plist>',
    'a boolean with content':
      '<plist version="1.0"><dict><key>A</key><true>1</true></dict></plist>',
  };

  /**
   * plistlib forgives these (a second value under <plist> is ignored, text in <true> is skipped);
   * the DTD does not allow them, and the fake refuses them — stricter, never laxer.
   */
  const stricterThanPlistlib = ['two values under <plist>', 'a boolean with content'];

  it('never accepts what plistlib rejects, and reads the same values where both accept', async () => {
    const script = [
      'import json, plistlib, sys',
      'docs = json.load(sys.stdin)',
      'out = {}',
      'for name, text in docs.items():',
      '    try:',
      '        out[name] = {"ok": plistlib.loads(text.encode("utf-8"))}',
      '    except Exception as error:',
      '        out[name] = {"error": str(error)}',
      'print(json.dumps(out))',
    ].join('\n');
    const python = await run('python3', ['-c', script], process.env, JSON.stringify(documents));
    expect(python.code, python.stderr).to.equal(0);
    const theirs = JSON.parse(python.stdout) as Record<string, { ok?: unknown; error?: string }>;
    const onlyFakeRefuses: string[] = [];
    for (const [name, text] of Object.entries(documents)) {
      let ours: { ok?: unknown; error?: string };
      try {
        ours = { ok: parsePlist(text) };
      } catch (error) {
        expect(error).to.be.instanceOf(PlistError);
        ours = { error: (error as Error).message };
      }
      const plistlib = theirs[name] ?? {};
      if ('error' in plistlib)
        expect(ours, `${name}: plistlib says ${plistlib.error}`).to.have.property('error');
      else if ('ok' in ours)
        expect(JSON.parse(JSON.stringify(ours.ok)), name).to.deep.equal(plistlib.ok);
      else onlyFakeRefuses.push(name);
    }
    expect(onlyFakeRefuses).to.deep.equal(stricterThanPlistlib);
    expect(theirs['a job with every kind of value']).to.have.property('ok');
  });
});

describe('fake launchctl (the executable on PATH)', function () {
  this.timeout(30_000);
  let home: string;
  let agents: string;
  const uid = process.getuid?.() ?? 0;
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: [FAKE_SUPERVISOR_BIN, process.env['PATH'] ?? '/usr/bin:/bin'].join(delimiter),
    HOME: home,
    ...extra,
  });
  const launchctl = (...args: string[]) => run('launchctl', args, env());

  /** A job whose process starts a child in its process group and one in a session of its own. */
  const familyScript = (pids: string) =>
    [
      "const { spawn } = require('node:child_process');",
      "const fs = require('node:fs');",
      "const sleeper = ['-e', 'setInterval(() => {}, 1000)'];",
      'const inGroup = spawn(process.execPath, sleeper, { stdio: "ignore" });',
      'const ownSession = spawn(process.execPath, sleeper, { stdio: "ignore", detached: true });',
      `fs.writeFileSync(${JSON.stringify(pids)}, JSON.stringify({ main: process.pid, inGroup: inGroup.pid, ownSession: ownSession.pid, env: process.env }));`,
      'setInterval(() => {}, 1000);',
    ].join('\n');

  async function writeJob(label: string, extra: Record<string, string> = {}): Promise<string> {
    const path = join(agents, `${label}.plist`);
    await writeFile(
      path,
      plistOf({
        Label: str(label),
        ProgramArguments: arr([process.execPath, '-e', familyScript(join(home, `${label}.pids`))]),
        RunAtLoad: '<true/>',
        ...extra,
      }),
      { mode: 0o644 },
    );
    return path;
  }
  async function pidsOf(label: string, previous?: number): Promise<Record<string, number>> {
    for (let waited = 0; waited < 10_000; waited += 20) {
      const text = await readFile(join(home, `${label}.pids`), 'utf8').catch(() => '');
      if (text) {
        const pids = JSON.parse(text) as Record<string, number>;
        if (pids['main'] !== previous) return pids;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${label} wrote no pids`);
  }
  async function gone(pid: number): Promise<boolean> {
    for (let waited = 0; waited < 10_000; waited += 20) {
      if (!processAlive(pid)) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  }
  const killQuietly = (pid: number | undefined) => {
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  };

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-launchctl-'));
    agents = join(home, 'Library', 'LaunchAgents');
    await mkdir(agents, { recursive: true });
  });
  afterEach(async () => {
    for (const label of ['dev.fleet.a', 'dev.fleet.b']) {
      await launchctl('bootout', `gui/${uid}/${label}`);
      const pids = await readFile(join(home, `${label}.pids`), 'utf8').catch(() => '');
      if (pids)
        for (const pid of Object.values(JSON.parse(pids) as Record<string, number>))
          if (typeof pid === 'number') killQuietly(pid);
    }
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
  });

  it('bootstraps a RunAtLoad job, and refuses a second bootstrap of the loaded label with error 5', async () => {
    const path = await writeJob('dev.fleet.a');
    expect((await launchctl('bootstrap', `gui/${uid}`, path)).code).to.equal(0);
    const pids = await pidsOf('dev.fleet.a');
    const again = await launchctl('bootstrap', `gui/${uid}`, path);
    expect(again.code).to.equal(5);
    expect(again.stderr).to.match(/^Bootstrap failed: 5: Input\/output error/);
    const printed = await launchctl('print', `gui/${uid}/dev.fleet.a`);
    expect(printed.stdout).to.match(new RegExp(`^gui/${uid}/dev.fleet.a = \\{`));
    expect(printed.stdout).to.include('\tstate = running\n');
    expect(printed.stdout).to.include(`\tpid = ${pids['main']}\n`);
    expect(printed.stdout).to.include('\tlast exit code = (never exited)\n');
  });

  it("gives a job launchd environment, not the caller's", async () => {
    const path = await writeJob('dev.fleet.a', {
      EnvironmentVariables: `<dict><key>NODE_ENV</key>${str('production')}</dict>`,
    });
    await run('launchctl', ['bootstrap', `gui/${uid}`, path], env({ FLEET_SECRET_HINT: 'x' }));
    const { env: jobEnv } = (await pidsOf('dev.fleet.a')) as unknown as {
      env: Record<string, string>;
    };
    expect(jobEnv['PATH']).to.equal('/usr/bin:/bin:/usr/sbin:/sbin');
    expect(jobEnv['NODE_ENV']).to.equal('production');
    expect(jobEnv['XPC_SERVICE_NAME']).to.equal('dev.fleet.a');
    expect(jobEnv).to.not.have.property('FLEET_SECRET_HINT');
  });

  it('kickstart -k ends the job and its process group, not a child in a session of its own', async () => {
    await launchctl('bootstrap', `gui/${uid}`, await writeJob('dev.fleet.a'));
    const before = await pidsOf('dev.fleet.a');
    const kicked = await launchctl('kickstart', '-k', '-p', `gui/${uid}/dev.fleet.a`);
    expect(kicked.code).to.equal(0);
    const after = await pidsOf('dev.fleet.a', before['main']);
    expect(kicked.stdout.trim()).to.equal(String(after['main']));
    expect(await gone(before['main'] as number)).to.equal(true);
    expect(await gone(before['inGroup'] as number)).to.equal(true);
    expect(processAlive(before['ownSession'])).to.equal(true);
    killQuietly(before['ownSession']);
  });

  it('kickstart -k leaves the process group of a job with AbandonProcessGroup', async () => {
    await launchctl(
      'bootstrap',
      `gui/${uid}`,
      await writeJob('dev.fleet.a', { AbandonProcessGroup: '<true/>' }),
    );
    const before = await pidsOf('dev.fleet.a');
    await launchctl('kickstart', '-k', `gui/${uid}/dev.fleet.a`);
    await pidsOf('dev.fleet.a', before['main']);
    expect(await gone(before['main'] as number)).to.equal(true);
    expect(processAlive(before['inGroup'])).to.equal(true);
    killQuietly(before['inGroup']);
    killQuietly(before['ownSession']);
  });

  it('bootout ends every process of the job, its own sessions included, and forgets it', async () => {
    await launchctl('bootstrap', `gui/${uid}`, await writeJob('dev.fleet.a'));
    const pids = await pidsOf('dev.fleet.a');
    expect((await launchctl('bootout', `gui/${uid}/dev.fleet.a`)).code).to.equal(0);
    for (const name of ['main', 'inGroup', 'ownSession'])
      expect(processAlive(pids[name]), name).to.equal(false);
    const printed = await launchctl('print', `gui/${uid}/dev.fleet.a`);
    expect(printed.code).to.equal(113);
    expect(printed.stderr).to.include(
      'Could not find service "dev.fleet.a" in domain for user gui:',
    );
    expect((await launchctl('bootout', `gui/${uid}/dev.fleet.a`)).code).to.equal(3);
  });

  it('runs the plist as bootstrapped: an edit on disk changes nothing until bootout and bootstrap', async () => {
    const path = await writeJob('dev.fleet.a');
    await launchctl('bootstrap', `gui/${uid}`, path);
    const before = await pidsOf('dev.fleet.a');
    await writeFile(
      path,
      plistOf({
        Label: str('dev.fleet.a'),
        ProgramArguments: arr(['/bin/false']),
        RunAtLoad: '<true/>',
      }),
    );
    await launchctl('kickstart', '-k', `gui/${uid}/dev.fleet.a`);
    const after = await pidsOf('dev.fleet.a', before['main']);
    expect(after['main']).to.not.equal(before['main']);
    killQuietly(before['ownSession']);
  });

  /**
   * A KeepAlive job whose process has just exited, before launchd started it again: the fake's
   * monitor is held (SIGSTOP) so the exit is not yet recorded, then let go once `verb` runs.
   */
  async function exitedBeforeRestart(verb: string[]): Promise<Ran> {
    const path = join(agents, 'dev.fleet.a.plist');
    const script = [
      "const fs = require('node:fs');",
      `fs.writeFileSync(${JSON.stringify(join(home, 'dev.fleet.a.pids'))}, JSON.stringify({ main: process.pid }));`,
      "process.on('SIGUSR1', () => process.exit(1));",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    await writeFile(
      path,
      plistOf({
        Label: str('dev.fleet.a'),
        ProgramArguments: arr([process.execPath, '-e', script]),
        KeepAlive: '<dict><key>SuccessfulExit</key><false/></dict>',
      }),
      { mode: 0o644 },
    );
    await launchctl('bootstrap', `gui/${uid}`, path);
    const { main } = await pidsOf('dev.fleet.a');
    const record = JSON.parse(
      await readFile(join(home, '.fleet-fake-supervisor/launchd/runs/dev.fleet.a.json'), 'utf8'),
    ) as { monitorPid: number };
    process.kill(record.monitorPid, 'SIGSTOP');
    try {
      process.kill(main as number, 'SIGUSR1');
      expect(await gone(main as number)).to.equal(true);
      const ran = run('launchctl', verb, env());
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.kill(record.monitorPid, 'SIGCONT');
      return await ran;
    } finally {
      if (processAlive(record.monitorPid)) process.kill(record.monitorPid, 'SIGCONT');
    }
  }

  it('boots out a KeepAlive job whose process exited before launchd started it again', async () => {
    const out = await exitedBeforeRestart(['bootout', `gui/${uid}/dev.fleet.a`]);
    expect(out.code, out.stderr).to.equal(0);
    expect((await launchctl('print', `gui/${uid}/dev.fleet.a`)).code).to.equal(113);
  });

  it('kickstart -k of a KeepAlive job whose process exited before launchd started it again starts it', async () => {
    const kicked = await exitedBeforeRestart(['kickstart', '-k', `gui/${uid}/dev.fleet.a`]);
    expect(kicked.code, kicked.stderr).to.equal(0);
    const printed = await launchctl('print', `gui/${uid}/dev.fleet.a`);
    expect(printed.stdout).to.include('\tstate = running\n');
  });

  it('does not run a job whose log directory is missing: last exit code 78 (EX_CONFIG)', async () => {
    const path = await writeJob('dev.fleet.b', {
      StandardOutPath: str(join(home, 'Library', 'Logs', 'fleet', 'b.log')),
    });
    expect((await launchctl('bootstrap', `gui/${uid}`, path)).code).to.equal(0);
    const printed = await launchctl('print', `gui/${uid}/dev.fleet.b`);
    expect(printed.stdout).to.include('\tstate = not running\n');
    expect(printed.stdout).to.include('\tlast exit code = 78: EX_CONFIG\n');
  });

  it('refuses what launchd refuses, with exit 5 and the reason', async () => {
    const cases: [string, Record<string, string>][] = [
      ['no Label', { ProgramArguments: arr(['/bin/true']) }],
      ['no program', { Label: str('dev.fleet.b') }],
      [
        'a relative log path',
        {
          Label: str('dev.fleet.b'),
          ProgramArguments: arr(['/bin/true']),
          StandardOutPath: str('~/x.log'),
        },
      ],
      [
        'an unknown ProcessType',
        {
          Label: str('dev.fleet.b'),
          ProgramArguments: arr(['/bin/true']),
          ProcessType: str('Fast'),
        },
      ],
      [
        'a key the fake does not model',
        { Label: str('dev.fleet.b'), ProgramArguments: arr(['/bin/true']), Sockets: '<dict/>' },
      ],
    ];
    for (const [name, keys] of cases) {
      const path = join(agents, 'dev.fleet.b.plist');
      await writeFile(path, plistOf(keys), { mode: 0o644 });
      const result = await launchctl('bootstrap', `gui/${uid}`, path);
      expect(result.code, name).to.equal(5);
      expect(result.stderr, name).to.match(
        /^Bootstrap failed: 5: Input\/output error\nfake launchctl: /,
      );
    }
    const path = await writeJob('dev.fleet.b');
    await chmod(path, 0o666);
    expect((await launchctl('bootstrap', `gui/${uid}`, path)).stderr).to.include(
      'dubious permissions',
    );
  });

  it("has no gui domain without a GUI login (no-gui-session), nor another user's", async () => {
    const path = await writeJob('dev.fleet.a');
    const noGui = await run(
      'launchctl',
      ['bootstrap', `gui/${uid}`, path],
      env({ FLEET_FAKE_SUPERVISOR_FAULTS: 'no-gui-session' }),
    );
    expect(noGui.code).to.equal(125);
    expect((await launchctl('bootstrap', `gui/${uid + 1}`, path)).code).to.not.equal(0);
    expect((await launchctl('bootstrap', 'system', path)).code).to.not.equal(0);
    expect((await launchctl('load', path)).code).to.not.equal(0);
  });
});
