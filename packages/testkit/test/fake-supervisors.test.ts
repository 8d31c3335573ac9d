/**
 * The fake supervisors themselves, run as the executables tests put on PATH: the subcommands they
 * support, the ones they refuse, and the catalogue-54 faults they model.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from 'chai';
import { FAKE_SUPERVISOR_BIN, parseXml, processAlive, readRun } from '../src/index.js';

/** Live processes whose command line names `dir` (a fake's monitor names its state directory). */
function processesNaming(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter((pid) => processAlive(pid));
}

/** Waits up to `ms` for no process to name `dir`; returns the ones left. */
async function survivorsOf(dir: string, ms = 5_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let left = processesNaming(dir);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = processesNaming(dir);
  }
  return left;
}

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('fake supervisors (executables on PATH)', function () {
  this.timeout(30_000);
  let home: string;
  const env = (extra: Record<string, string> = {}) => ({
    PATH: [FAKE_SUPERVISOR_BIN, process.env['PATH'] ?? '/usr/bin:/bin'].join(delimiter),
    HOME: home,
    ...extra,
  });
  const run = (command: string, args: string[], extra: Record<string, string> = {}): Promise<Ran> =>
    new Promise((resolve) => {
      execFile(command, args, { env: env(extra) }, (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : -1) : 0,
          stdout,
          stderr,
        }),
      );
    });
  const unitDir = () => join(home, '.config/systemd/user');
  const writeUnit = (body: string) => writeFile(join(unitDir(), 'demo.service'), body);
  const service = (script: string) =>
    `[Unit]\nDescription=demo\n\n[Service]\nType=exec\nExecStart=${process.execPath} -e "${script}"\nRestart=no\n\n[Install]\nWantedBy=default.target\n`;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-fakes-'));
    await mkdir(unitDir(), { recursive: true });
  });
  afterEach(async () => {
    await run('systemctl', ['--user', 'stop', 'demo.service']);
    await run('systemctl', ['--user', 'stop', 'demo-escape.service']);
    // maxRetries: a monitor still running may write into its state while it is being removed.
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
    // No fake's process outlives the test that started it (its monitor names the home).
    expect(await survivorsOf(home), 'processes left behind').to.deep.equal([]);
  });

  describe('systemctl', () => {
    it('is the fake, first on PATH', async () => {
      const version = await run('systemctl', ['--user', 'show', '-p', 'Version', '--value']);
      expect(version.stdout).to.equal('252 (fleet-fake)\n');
    });

    it('starts the ExecStart process for real, reports it, and stops it', async () => {
      await writeUnit(service('setInterval(() => {}, 1000)'));
      expect((await run('systemctl', ['--user', 'daemon-reload'])).code).to.equal(0);
      expect((await run('systemctl', ['--user', 'start', 'demo.service'])).code).to.equal(0);
      const shown = await run('systemctl', [
        '--user',
        'show',
        '--property=ActiveState,MainPID',
        'demo.service',
      ]);
      const pid = Number(/MainPID=(\d+)/.exec(shown.stdout)?.[1]);
      expect(shown.stdout).to.contain('ActiveState=active');
      expect(processAlive(pid)).to.equal(true);
      expect((await run('systemctl', ['--user', 'is-active', 'demo.service'])).stdout).to.equal(
        'active\n',
      );
      expect((await run('systemctl', ['--user', 'stop', 'demo.service'])).code).to.equal(0);
      expect(processAlive(pid)).to.equal(false);
      expect(await run('systemctl', ['--user', 'is-active', 'demo.service'])).to.deep.include({
        code: 3,
        stdout: 'inactive\n',
      });
    });

    it('ends the whole group on restart (a setsid child too), but not a transient unit of its own', async () => {
      const pids = join(home, 'pids');
      // The main process starts a detached child (its own session) and a transient unit.
      const script = [
        "const { spawn, execFileSync } = require('node:child_process');",
        "const fs = require('node:fs');",
        `const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });`,
        'child.unref();',
        // Once: the main process that the restart starts again must not start a second one.
        `if (!fs.existsSync(${JSON.stringify(pids)})) execFileSync('systemd-run', ['--user', '--unit=demo-escape.service', '--collect', '--', process.execPath, '-e', 'setInterval(() => {}, 1000)']);`,
        `fs.writeFileSync(${JSON.stringify(pids)}, String(child.pid));`,
        'setInterval(() => {}, 1000);',
      ].join(' ');
      await writeFile(
        join(unitDir(), 'demo.service'),
        `[Service]\nType=exec\nExecStart=${process.execPath} -e ${JSON.stringify(script).replace(/\$/g, '$$$$')}\n`,
      );
      expect((await run('systemctl', ['--user', 'daemon-reload'])).code).to.equal(0);
      expect((await run('systemctl', ['--user', 'start', 'demo.service'])).code).to.equal(0);
      const deadline = Date.now() + 10_000;
      let detached = 0;
      while (Date.now() < deadline && detached === 0) {
        detached = Number(await readFile(pids, 'utf8').catch(() => '0'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const escaped = Number(
        /MainPID=(\d+)/.exec(
          (await run('systemctl', ['--user', 'show', '-p', 'MainPID', 'demo-escape.service']))
            .stdout,
        )?.[1],
      );
      expect(processAlive(detached)).to.equal(true);
      expect(processAlive(escaped)).to.equal(true);
      expect((await run('systemctl', ['--user', 'restart', 'demo.service'])).code).to.equal(0);
      expect(processAlive(detached), 'the setsid child of the unit').to.equal(false);
      expect(processAlive(escaped), 'the transient unit of its own').to.equal(true);
      expect((await run('systemctl', ['--user', 'stop', 'demo-escape.service'])).code).to.equal(0);
      expect(processAlive(escaped)).to.equal(false);
      // --collect: an ended transient unit is forgotten.
      expect(
        (await run('systemctl', ['--user', 'show', '-p', 'LoadState', 'demo-escape.service']))
          .stdout,
      ).to.equal('LoadState=not-found\n');
    });

    it('ends a run whose fake state is removed, group and all: nothing outlives its test', async () => {
      const started = await run('systemd-run', [
        '--user',
        '--unit=demo-orphan.service',
        '--',
        process.execPath,
        '-e',
        "require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); setInterval(() => {}, 1000)",
      ]);
      expect(started.code, started.stderr).to.equal(0);
      const record = readRun(join(home, '.fleet-fake-supervisor/systemd'), 'demo-orphan.service');
      expect(processAlive(record?.pid)).to.equal(true);
      expect(processesNaming(home).length).to.be.greaterThan(0);
      // The test's home goes (as afterEach removes it) with the unit still running.
      await rm(join(home, '.fleet-fake-supervisor'), {
        recursive: true,
        force: true,
        maxRetries: 5,
      });
      expect(await survivorsOf(home), 'the monitor outlived its state').to.deep.equal([]);
      expect(processAlive(record?.pid), 'the runtime outlived its monitor').to.equal(false);
    });

    it('keeps the loaded definition until daemon-reload, and says NeedDaemonReload=yes', async () => {
      await writeUnit(service('setInterval(() => {}, 1000)'));
      const need = async () =>
        (
          await run('systemctl', [
            '--user',
            'show',
            '-p',
            'NeedDaemonReload',
            '--value',
            'demo.service',
          ])
        ).stdout;
      expect(
        (await run('systemctl', ['--user', 'start', 'demo.service'])).code,
        'not loaded yet',
      ).to.equal(5);
      await run('systemctl', ['--user', 'daemon-reload']);
      expect(await need()).to.equal('no\n');
      await writeUnit(service('process.exit(0)'));
      expect(await need()).to.equal('yes\n');
      const started = await run('systemctl', ['--user', 'start', 'demo.service']);
      expect(started.stderr).to.contain("Run 'systemctl --user daemon-reload'");
      expect(readRun(join(home, '.fleet-fake-supervisor/systemd'), 'demo.service')?.state).to.equal(
        'running',
      ); // the old definition
      await run('systemctl', ['--user', 'daemon-reload'], {
        FLEET_FAKE_SUPERVISOR_FAULTS: 'daemon-reload-ignored',
      });
      expect(await need()).to.equal('yes\n');
    });

    it('reports a process that exits non-zero as failed', async () => {
      await writeUnit(service('process.exit(3)'));
      await run('systemctl', ['--user', 'daemon-reload']);
      await run('systemctl', ['--user', 'start', 'demo.service']);
      for (
        let i = 0;
        i < 100 &&
        readRun(join(home, '.fleet-fake-supervisor/systemd'), 'demo.service')?.state !== 'exited';
        i += 1
      ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(
        (
          await run('systemctl', [
            '--user',
            'show',
            '-p',
            'ActiveState,ExecMainStatus',
            'demo.service',
          ])
        ).stdout,
      ).to.equal('ActiveState=failed\nExecMainStatus=3\n');
    });

    it('models the faults: no bus, a failing start', async () => {
      expect(
        await run('systemctl', ['--user', 'daemon-reload'], {
          FLEET_FAKE_SUPERVISOR_FAULTS: 'no-bus',
        }),
      ).to.deep.include({ code: 1, stderr: 'Failed to connect to bus: No medium found\n' });
      await writeUnit(service('setInterval(() => {}, 1000)'));
      await run('systemctl', ['--user', 'daemon-reload']);
      const failed = await run('systemctl', ['--user', 'restart', 'demo.service'], {
        FLEET_FAKE_SUPERVISOR_FAULTS: 'start-fails',
      });
      expect(failed.code).to.equal(1);
      expect((await run('systemctl', ['--user', 'is-active', 'demo.service'])).stdout).to.equal(
        'failed\n',
      );
    });

    it('refuses what it does not support, with a non-zero exit', async () => {
      for (const args of [
        ['daemon-reload'],
        ['--user', 'list-units'],
        ['--user', 'kill', 'demo.service'],
        ['--user', 'start'],
        ['--user', 'show', '--all'],
      ]) {
        const result = await run('systemctl', args);
        expect(result.code, args.join(' ')).to.not.equal(0);
        expect(result.stderr, args.join(' ')).to.match(/fake systemctl/);
      }
    });
  });

  describe('loginctl', () => {
    it('answers Linger, and Linger=no when the fault is on', async () => {
      expect(
        (await run('loginctl', ['show-user', '1000', '--property=Linger', '--value'])).stdout,
      ).to.equal('yes\n');
      expect(
        (
          await run('loginctl', ['show-user', '1000', '-p', 'Linger'], {
            FLEET_FAKE_SUPERVISOR_FAULTS: 'no-linger',
          })
        ).stdout,
      ).to.equal('Linger=no\n');
      expect((await run('loginctl', ['terminate-user', '1000'])).code).to.not.equal(0);
    });
  });

  describe('schtasks', () => {
    const xml = (script: string, extra = '') => `<?xml version="1.0" encoding="UTF-8"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo><Description>demo</Description></RegistrationInfo>
  <Triggers><LogonTrigger><Enabled>true</Enabled></LogonTrigger></Triggers>
  <Principals><Principal id="Author"><LogonType>InteractiveToken</LogonType></Principal></Principals>
  <Settings><Enabled>true</Enabled></Settings>${extra}
  <Actions Context="Author"><Exec><Command>${process.execPath}</Command><Arguments>-e "${script}"</Arguments></Exec></Actions>
</Task>
`;

    it('creates, runs, queries and ends a task, really running its program', async () => {
      const file = join(home, 'task.xml');
      await writeFile(file, xml('setInterval(() => {}, 1000)'));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).stdout).to.contain(
        'SUCCESS',
      );
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).stderr).to.contain(
        'already exists',
      );
      expect((await run('schtasks', ['/create', '/xml', file, '/tn', 'demo', '/f'])).code).to.equal(
        0,
      );
      expect((await run('schtasks', ['/Run', '/TN', 'demo'])).stdout).to.contain(
        'Attempted to run',
      );
      const list = await run('schtasks', ['/Query', '/TN', 'demo', '/FO', 'LIST', '/V']);
      expect(list.stdout).to.match(/Status:\s+Running/);
      const pid = readRun(join(home, '.fleet-fake-supervisor/schtasks'), 'demo')?.pid;
      expect(processAlive(pid)).to.equal(true);
      expect(
        parseXml((await run('schtasks', ['/Query', '/TN', 'demo', '/XML'])).stdout).root.name,
      ).to.equal('Task');
      expect((await run('schtasks', ['/End', '/TN', 'demo'])).stdout).to.contain(
        'terminated successfully',
      );
      expect(processAlive(pid)).to.equal(false);
      expect(
        (await run('schtasks', ['/Query', '/TN', 'demo', '/FO', 'LIST', '/V'])).stdout,
      ).to.match(/Status:\s+Ready/);
    });

    it('/End ends the whole process tree of the task, as a job object does (a detached child too)', async () => {
      const pids = join(home, 'pids');
      const script = `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }); c.unref(); require('node:fs').writeFileSync('${pids}', String(c.pid)); setInterval(() => {}, 1000);`;
      const file = join(home, 'task.xml');
      await writeFile(file, xml(script.replace(/"/g, '&quot;')));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).code).to.equal(0);
      expect((await run('schtasks', ['/Run', '/TN', 'demo'])).code).to.equal(0);
      const deadline = Date.now() + 10_000;
      let detached = 0;
      while (Date.now() < deadline && detached === 0) {
        detached = Number(await readFile(pids, 'utf8').catch(() => '0'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(processAlive(detached)).to.equal(true);
      expect((await run('schtasks', ['/End', '/TN', 'demo'])).code).to.equal(0);
      expect(processAlive(detached)).to.equal(false);
    });

    it("starts a task in the logon environment, not /Run's caller's, and refuses an environment element", async () => {
      const seen = join(home, 'seen.json');
      const script = `require('node:fs').writeFileSync('${seen}', JSON.stringify({ credentials: process.env.FLEET_CREDENTIALS ?? null, state: process.env.XDG_STATE_HOME ?? null, home: process.env.HOME ?? null }))`;
      const file = join(home, 'task.xml');
      await writeFile(file, xml(script.replace(/"/g, '&quot;')));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).code).to.equal(0);
      const caller = {
        FLEET_CREDENTIALS: '/caller/credentials.json',
        XDG_STATE_HOME: '/caller/state',
      };
      expect((await run('schtasks', ['/Run', '/TN', 'demo'], caller)).code).to.equal(0);
      const deadline = Date.now() + 10_000;
      let text = '';
      while (Date.now() < deadline && text === '') {
        text = await readFile(seen, 'utf8').catch(() => '');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(JSON.parse(text)).to.deep.equal({ credentials: null, state: null, home });
      // Task Scheduler's Exec has no environment: a definition that tries one is not registered.
      await writeFile(
        file,
        xml('1').replace(
          '</Arguments>',
          '</Arguments><Environment><Variable name="FLEET_CREDENTIALS">/x</Variable></Environment>',
        ),
      );
      expect(
        (await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo', '/F'])).stderr,
      ).to.contain('Exec: unexpected element <Environment>');
    });

    it('refuses malformed XML, a missing required element, an unknown task and other switches', async () => {
      const file = join(home, 'task.xml');
      await writeFile(file, xml('1').replace('</Task>', ''));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).stderr).to.contain(
        'The task XML is malformed',
      );
      await writeFile(file, xml('1').replace(/<Triggers>.*<\/Triggers>/, ''));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).stderr).to.contain(
        'Task/Triggers',
      );
      await writeFile(file, xml('1', '\n  <Bogus/>'));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).stderr).to.contain(
        'unexpected element <Bogus>',
      );
      await writeFile(file, xml('1').replace('encoding="UTF-8"', 'encoding="UTF-16"'));
      expect((await run('schtasks', ['/Create', '/XML', file, '/TN', 'demo'])).stderr).to.contain(
        'encoding',
      );
      expect((await run('schtasks', ['/Run', '/TN', 'nope'])).stderr).to.contain(
        'cannot find the file specified',
      );
      for (const args of [
        ['/Delete', '/TN', 'demo', '/F'],
        ['/Change', '/TN', 'demo', '/DISABLE'],
        ['/Query'],
        ['/Run', '/TN', 'demo', '/I'],
      ]) {
        expect((await run('schtasks', args)).code, args.join(' ')).to.equal(1);
      }
    });
  });

  describe('the XML reader', () => {
    it('reads elements, attributes, entities and CDATA; refuses what is not well-formed', () => {
      const { declaration, root } = parseXml(
        '\ufeff<?xml version="1.0"?><!-- c --><a x="1 &amp; 2"><b>&lt;t&gt;<![CDATA[<raw>]]>&#65;</b><c/></a>',
      );
      expect(declaration).to.deep.equal({ version: '1.0' });
      expect(root.attributes).to.deep.equal({ x: '1 & 2' });
      expect(root.children.map((c) => [c.name, c.text])).to.deep.equal([
        ['b', '<t><raw>A'],
        ['c', ''],
      ]);
      for (const bad of [
        '<a>',
        '<a></b>',
        '<a/><b/>',
        '<!DOCTYPE a><a/>',
        '<a>&nope;</a>',
        '<a x="1" x="2"/>',
        '<a x=1/>',
        'text<a/>',
      ]) {
        expect(() => parseXml(bad), bad).to.throw();
      }
    });
  });
});
