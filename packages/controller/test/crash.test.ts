/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * kill -9 of the controller at every step of an install (contract §15; catalogue C21–C23, B13, F44):
 * the file is wholly old or wholly new, the backup exists when the write happened, temp files are
 * swept at the next start, an `interrupted` audit record exists, the status says which side the
 * file is on, and a retry succeeds once.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { verifyAuditChain } from '@fleet/core';
import { TokenStore } from '../src/tokens/store.js';
import { statePaths } from '../src/state-paths.js';
import { systemClock } from '../src/context.js';
import { spawnController, type ChildController } from './support/child.js';
import { sha256 } from './support/install.js';
import { call, newId } from './support/node.js';

const STATE = '.local/state/fleet';
const APP = '~/.config/fixture/app.conf';
const SVC = '~/.config/coupled/svc.yaml';
const abs = (home: string, path: string) => join(home, path.slice(2));

async function makeHome(): Promise<{ home: string; token: string }> {
  const home = await mkdtemp(join(tmpdir(), 'fleet-crash-'));
  const store = new TokenStore(statePaths(home), systemClock);
  const { token } = await store.issue({
    client: 'crash-test',
    scopes: ['config:install', 'config:read'],
  });
  return { home, token };
}

async function seed(home: string, path: string, content: string): Promise<void> {
  await mkdir(dirname(abs(home, path)), { recursive: true, mode: 0o700 });
  await writeFile(abs(home, path), content, { mode: 0o600 });
}

const temps = async (home: string, path: string) =>
  (await readdir(dirname(abs(home, path)))).filter((name) => name.startsWith('.fleet-tmp-'));

interface Step {
  readonly point: string;
  readonly domain: 'fixture' | 'coupled';
  /** Where the file must be after the kill. */
  readonly side: 'before' | 'after';
  readonly backup: boolean;
  readonly temp: boolean;
}

const STEPS: Step[] = [
  { point: 'install.before_backup', domain: 'fixture', side: 'before', backup: false, temp: false },
  { point: 'install.after_backup', domain: 'fixture', side: 'before', backup: true, temp: false },
  {
    point: 'install.after_temp_write',
    domain: 'fixture',
    side: 'before',
    backup: true,
    temp: true,
  },
  { point: 'install.before_rename', domain: 'fixture', side: 'before', backup: true, temp: true },
  { point: 'install.after_rename', domain: 'fixture', side: 'after', backup: true, temp: false },
  { point: 'install.during_action', domain: 'coupled', side: 'after', backup: true, temp: false },
];

describe('kill -9 during an install', () => {
  const homes: string[] = [];
  let child: ChildController | undefined;
  afterEach(async () => {
    await child?.stop();
    child = undefined;
  });
  after(async () => {
    for (const home of homes) await rm(home, { recursive: true, force: true });
  });

  for (const step of STEPS) {
    it(`at ${step.point}: wholly ${step.side === 'before' ? 'old' : 'new'}, then recovered at the next start`, async () => {
      const { home, token } = await makeHome();
      homes.push(home);
      const path = step.domain === 'fixture' ? APP : SVC;
      const fileId = step.domain === 'fixture' ? 'app.conf' : 'svc.yaml';
      const OLD = 'old content\n';
      const NEW = 'new content\n';
      await seed(home, path, OLD);
      const operationId = newId();
      const body = {
        operationId,
        domain: step.domain,
        files: [{ fileId, path, expectedSha256: sha256(OLD), content: NEW }],
        parameters: {},
      };

      child = await spawnController(home, { FLEET_FAILPOINT: `${step.point}:kill` });
      const answer = await call(child.url, '/v1/install', { token, body }).catch(
        (error: Error) => error,
      );
      expect(answer, 'the connection drops: no answer').to.be.instanceOf(Error);
      expect(await child.exited).to.equal('SIGKILL');
      child = undefined;

      const live = await readFile(abs(home, path), 'utf8');
      expect(live).to.equal(step.side === 'before' ? OLD : NEW);
      const backups = await readdir(join(home, STATE, 'backups', step.domain)).catch(
        () => [] as string[],
      );
      if (step.backup) {
        expect(backups).to.have.length(1);
        expect(
          await readFile(join(home, STATE, 'backups', step.domain, backups[0] as string), 'utf8'),
        ).to.equal(OLD);
      } else {
        expect(backups).to.deep.equal([]);
      }
      expect((await temps(home, path)).length > 0).to.equal(step.temp);

      child = await spawnController(home);
      expect(await temps(home, path), 'temp files swept').to.deep.equal([]);
      const audit = await readFile(join(home, STATE, 'audit.jsonl'), 'utf8');
      const records = audit
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const interrupted = records.filter((r) => r.operationId === operationId);
      expect(interrupted.map((r) => r.outcome)).to.deep.equal(['interrupted']);
      expect(verifyAuditChain(audit).ok).to.equal(true);

      const status = await call(child.url, `/v1/operations/${operationId}`, { token });
      expect(status.body.state).to.equal('interrupted');
      const observed = status.body.recovery.files;
      if (step.point === 'install.before_backup') expect(observed).to.deep.equal([]);
      else expect(observed).to.deep.equal([{ path, liveSha256: sha256(live), matches: step.side }]);
      expect(status.body.recovery.needsAction).to.equal(step.point === 'install.during_action');

      // The replayed id is not executed again; a new one with the live fingerprint succeeds once.
      const replay = await call(child.url, '/v1/install', { token, body });
      expect(replay.body.error.code).to.equal('REPLAY_REJECTED');
      const retry = await call(child.url, '/v1/install', {
        token,
        body: {
          ...body,
          operationId: newId(),
          files: [{ ...body.files[0], expectedSha256: sha256(live) }],
        },
      });
      expect(retry.status, retry.text).to.equal(200);
      expect(await readFile(abs(home, path), 'utf8')).to.equal(NEW);
    });
  }

  it('creates temp files, backups and the audit log no wider than 0600, even under umask 000', async () => {
    const { home, token } = await makeHome();
    homes.push(home);
    await seed(home, APP, 'old\n');
    child = await spawnController(home, {
      FIXTURE_UMASK: '0',
      FLEET_FAILPOINT: 'install.after_temp_write:kill',
    });
    const operationId = newId();
    await call(child.url, '/v1/install', {
      token,
      body: {
        operationId,
        domain: 'fixture',
        files: [
          { fileId: 'app.conf', path: APP, expectedSha256: sha256('old\n'), content: 'new\n' },
        ],
        parameters: {},
      },
    }).catch(() => undefined);
    await child.exited;
    child = undefined;
    const [temp] = await temps(home, APP);
    expect((await stat(join(dirname(abs(home, APP)), temp as string))).mode & 0o777).to.equal(
      0o600,
    );

    child = await spawnController(home, { FIXTURE_UMASK: '0' });
    const answer = await call(child.url, '/v1/install', {
      token,
      body: {
        operationId: newId(),
        domain: 'fixture',
        files: [
          { fileId: 'app.conf', path: APP, expectedSha256: sha256('old\n'), content: 'new\n' },
          {
            fileId: 'second.conf',
            path: '~/.config/fixture/second.conf',
            expectedSha256: null,
            content: 'b\n',
          },
        ],
        parameters: {},
      },
    });
    expect(answer.status, answer.text).to.equal(200);
    const modes = async (p: string) => (await stat(p)).mode & 0o777;
    const backupDir = join(home, STATE, 'backups', 'fixture');
    for (const name of await readdir(backupDir))
      expect(await modes(join(backupDir, name))).to.equal(0o600);
    expect(await modes(backupDir)).to.equal(0o700);
    expect(await modes(join(home, STATE))).to.equal(0o700);
    expect(await modes(join(home, STATE, 'audit.jsonl'))).to.equal(0o600);
    expect(await modes(join(home, STATE, 'tokens.json'))).to.equal(0o600);
    expect(await modes(abs(home, APP))).to.equal(0o600);
    expect(await modes(abs(home, '~/.config/fixture/second.conf'))).to.equal(0o600);
    for (const name of await readdir(join(home, STATE, 'operations'))) {
      expect(await modes(join(home, STATE, 'operations', name))).to.equal(0o600);
    }
  });

  it("sweeps a dead writer's state temp at start, but not one whose writer still runs", async () => {
    // `fleet token issue --home` replaces tokens.json beside a starting controller: its temp file
    // names its pid (stateTempName), and only a writer that no longer runs has left it behind.
    const { home } = await makeHome();
    homes.push(home);
    const writer = spawn('sleep', ['60'], { stdio: 'ignore' });
    const ended = spawn('true', [], { stdio: 'ignore' });
    await new Promise((resolve) => ended.once('exit', resolve));
    const root = join(home, STATE);
    const live = `.fleet-tmp-state-tokens.json-p${writer.pid}-0123456789ab`;
    const dead = `.fleet-tmp-state-tokens.json-p${ended.pid}-0123456789ab`;
    const unnamed = '.fleet-tmp-state-written.json-0123456789ab';
    try {
      for (const name of [live, dead, unnamed]) await writeFile(join(root, name), '{}\n');
      child = await spawnController(home);
      const left = (await readdir(root)).filter((name) => name.startsWith('.fleet-tmp-'));
      expect(left).to.deep.equal([live]);
    } finally {
      writer.kill('SIGKILL');
    }
  });
});
