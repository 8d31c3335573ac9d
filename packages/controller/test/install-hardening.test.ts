/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client. */
/**
 * The smaller install findings of issue 11 (item 6), each through a real controller:
 * - owner and set-id bits (catalogue 13): kept or refused, never dropped silently;
 * - a write failing before its rename (ENOSPC, injected with strace) leaves no orphan backup;
 * - a malformed env file closes the operation cleanly: the same id is answered from its record,
 *   a new id goes through;
 * - hard links (catalogue 16): export refuses a multi-link file, install breaks the link and says
 *   so in the receipt (`hardlinkBroken: true`), the other name keeps the old content;
 * - install journals (catalogue 46's rule): a torn last line is "step not done", a bad line before
 *   it is `RECOVERY_REQUIRED` for that operation.
 */
import {
  chmod,
  chown,
  link,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { SYSTEM_TOOLS, requireSystemTools, skipForEnvironment } from '@fleet/testkit';
import { parseOperationJournal } from '../src/operations.js';
import { keptAttributes } from '../src/fs/attributes.js';
import { TokenStore } from '../src/tokens/store.js';
import { statePaths } from '../src/state-paths.js';
import { systemClock } from '../src/context.js';
import { spawnController } from './support/child.js';
import { APP } from './support/fixture-registry.js';
import { install, sha256 } from './support/install.js';
import { call, newId, startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'none';
}

describe('install: owner and special bits (catalogue 13)', () => {
  const user = { uid: 1000, gid: 1000, groups: [1000, 27] };
  const root = { uid: 0, gid: 0, groups: [0] };
  const cases: [
    title: string,
    live: { mode: number; uid: number; gid: number },
    own: typeof user,
    expected: string | { mode: number; uid: number; gid: number },
  ][] = [
    [
      'own file: mode kept',
      { mode: 0o640, uid: 1000, gid: 1000 },
      user,
      { mode: 0o640, uid: 1000, gid: 1000 },
    ],
    [
      'a group the user is in: kept',
      { mode: 0o640, uid: 1000, gid: 27 },
      user,
      { mode: 0o640, uid: 1000, gid: 27 },
    ],
    [
      'the sticky bit is kept',
      { mode: 0o1644, uid: 1000, gid: 1000 },
      user,
      { mode: 0o1644, uid: 1000, gid: 1000 },
    ],
    [
      "another user's file: refused (its owner would change)",
      { mode: 0o644, uid: 1001, gid: 1000 },
      user,
      'FILE_ATTRIBUTES_REFUSED',
    ],
    [
      'a group the user is not in: refused',
      { mode: 0o644, uid: 1000, gid: 5 },
      user,
      'FILE_ATTRIBUTES_REFUSED',
    ],
    ['setuid: refused', { mode: 0o4755, uid: 1000, gid: 1000 }, user, 'FILE_ATTRIBUTES_REFUSED'],
    ['setgid: refused', { mode: 0o2755, uid: 1000, gid: 1000 }, user, 'FILE_ATTRIBUTES_REFUSED'],
    [
      "as root, another user's file keeps its owner",
      { mode: 0o600, uid: 1001, gid: 5 },
      root,
      { mode: 0o600, uid: 1001, gid: 5 },
    ],
    [
      'as root, setuid is refused too',
      { mode: 0o4755, uid: 0, gid: 0 },
      root,
      'FILE_ATTRIBUTES_REFUSED',
    ],
  ];
  for (const [title, live, own, expected] of cases) {
    it(title, () => {
      if (typeof expected === 'string') {
        expect(thrownCode(() => keptAttributes('~/f', live, own))).to.equal(expected);
      } else {
        expect(keptAttributes('~/f', live, own)).to.deep.equal(expected);
      }
    });
  }

  describe('through a real controller', () => {
    let node: TestNode;
    let token: string;
    before(async () => {
      node = await startNode();
      token = await node.issue(['config:read', 'config:install']);
    });
    after(async () => node.dispose());

    it('as root: a file of another owner keeps its owner, group and mode', async function () {
      if (process.getuid?.() !== 0) {
        skipForEnvironment(this, 'only root can give a file to another owner');
      }
      await node.write(APP, 'old\n', 0o640);
      await chown(node.abs(APP), 65534, 65534);
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'new\n' },
      ]);
      expect(answer.status, answer.text).to.equal(200);
      const after = await stat(node.abs(APP));
      expect([after.uid, after.gid, after.mode & 0o7777]).to.deep.equal([65534, 65534, 0o640]);
    });

    it('a setuid file is refused (FILE_ATTRIBUTES_REFUSED, 409), nothing written, no backup', async () => {
      await node.write(APP, 'old\n', 0o644);
      await chmod(node.abs(APP), 0o4755);
      const backups = () => readdir(join(node.home, STATE, 'backups', 'fixture')).catch(() => []);
      const before = await backups();
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'new\n' },
      ]);
      expect(answer.status).to.equal(409);
      expect(answer.body.error.code).to.equal('FILE_ATTRIBUTES_REFUSED');
      expect(await readFile(node.abs(APP), 'utf8')).to.equal('old\n');
      expect((await stat(node.abs(APP))).mode & 0o7777).to.equal(0o4755);
      expect(await backups()).to.deep.equal(before);
    });

    it('a sticky bit survives the replace', async () => {
      await node.write(APP, 'old\n', 0o644);
      await chmod(node.abs(APP), 0o1644);
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'new\n' },
      ]);
      expect(answer.status, answer.text).to.equal(200);
      expect((await stat(node.abs(APP))).mode & 0o7777).to.equal(0o1644);
    });
  });
});

describe('install: a malformed env file closes the operation cleanly', () => {
  let node: TestNode;
  let token: string;
  before(async () => {
    node = await startNode();
    token = await node.issue(['config:read', 'config:install']);
  });
  after(async () => node.dispose());

  it('the same id is answered from its record, a new id goes through once the file is fixed', async () => {
    const env = join(node.home, '.config/fleet/env');
    await writeFile(env, `CANARY=${node.canary}\nthis line is not KEY=VALUE-shaped at all\n`);
    const id = newId();
    const files = [{ path: APP, fileId: 'app.conf', content: 'k={{ secret.CANARY }}\n' }];
    const first = await install(node, token, 'fixture', files, { operationId: id });
    expect(first.body.error.code).to.equal('ENV_FILE_INVALID');
    expect(first.text).to.not.contain(node.canary);
    const again = await install(node, token, 'fixture', files, { operationId: id });
    expect(again.status).to.equal(first.status);
    expect(again.body).to.deep.equal(first.body);
    const status = await node.call(`/v1/operations/${id}`, { token });
    expect(status.body.state).to.equal('failed');
    expect(await readdir(join(node.home, STATE, 'journal'))).to.deep.equal([]);

    await writeFile(env, `CANARY=${node.canary}\n`);
    const fixed = await install(node, token, 'fixture', files);
    expect(fixed.status, fixed.text).to.equal(200);
  });
});

describe('install and export of a hard-linked file (catalogue 16)', () => {
  let node: TestNode;
  let token: string;
  before(async () => {
    node = await startNode();
    token = await node.issue(['config:read', 'config:install']);
  });
  after(async () => node.dispose());

  it('export refuses it (HARDLINK_REFUSED); install breaks the link, says so, the other name keeps the old content', async () => {
    await node.write(APP, 'old\n');
    const other = join(node.home, 'other-name');
    await link(node.abs(APP), other);
    const exported = await node.call('/v1/export', { token, body: { path: APP } });
    expect(exported.status).to.equal(409);
    expect(exported.body.error.code).to.equal('HARDLINK_REFUSED');
    expect(exported.body.error.message).to.contain('hard links');

    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n' },
    ]);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.files[0].hardlinkBroken).to.equal(true);
    expect(await readFile(other, 'utf8')).to.equal('old\n');
    expect(await readFile(node.abs(APP), 'utf8')).to.equal('new\n');

    // One link now: read out again, and the next receipt says nothing of links.
    expect((await node.call('/v1/export', { token, body: { path: APP } })).status).to.equal(200);
    const next = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'newer\n' },
    ]);
    expect(next.body.files[0]).to.not.have.property('hardlinkBroken');
  });
});

describe('install journals: the WAL rule', () => {
  const id = '01JABCDEFGHJKMNPQRSTVWXYZ0';
  const begin = JSON.stringify({
    event: 'begin',
    operationId: id,
    operation: 'install',
    domain: 'fixture',
    client: 'c',
    paths: [APP],
    startedAt: '2026-01-01T00:00:00.000Z',
  });
  const write = JSON.stringify({
    event: 'write',
    path: APP,
    beforeSha256: null,
    afterSha256: sha256('x'),
    backupPath: null,
  });

  const cases: [title: string, text: string, expected: number | 'RECOVERY_REQUIRED'][] = [
    ['a whole journal', `${begin}\n${write}\n`, 2],
    ['a torn last line is "step not done"', `${begin}\n${write.slice(0, 30)}`, 1],
    ['a last line complete but without its newline is still torn', `${begin}\n${write}`, 1],
    ['an empty file: nothing was done', '', 0],
    ['a bad line before the end', `${begin}\n{"event":"wr\n${write}\n`, 'RECOVERY_REQUIRED'],
    [
      'a complete last line that is not an event',
      `${begin}\n{"event":"nope"}\n`,
      'RECOVERY_REQUIRED',
    ],
    ['an unknown field', `${begin.slice(0, -1)},"extra":1}\n`, 'RECOVERY_REQUIRED'],
  ];
  for (const [title, text, expected] of cases) {
    it(title, () => {
      if (expected === 'RECOVERY_REQUIRED') {
        expect(thrownCode(() => parseOperationJournal(text, id))).to.equal(expected);
      } else {
        expect(parseOperationJournal(text, id)).to.have.length(expected);
      }
    });
  }

  it('at start, an operation whose journal has a bad line before the end is RECOVERY_REQUIRED, kept aside, audited; the rest is recovered', async () => {
    const node = await startNode();
    try {
      const token = await node.issue(['config:read', 'config:install']);
      await node.controller.close();
      const journal = join(node.home, STATE, 'journal');
      // A fresh id: records older than the retention (30 days) are pruned at start.
      const fresh = newId();
      await writeFile(
        join(journal, `${fresh}.jsonl`),
        `${begin.replace(id, fresh)}\n{"event":"wr\n${write}\n`,
      );
      await node.restart();
      const status = await node.call(`/v1/operations/${fresh}`, { token });
      expect(status.status, status.text).to.equal(200);
      expect(status.body.state).to.equal('interrupted');
      expect(status.body.error.code).to.equal('RECOVERY_REQUIRED');
      expect(status.body.error.message).to.contain('line 2 of 3');
      expect(status.body.recovery.needsAction).to.equal(true);
      expect(await readdir(journal)).to.deep.equal([`${fresh}.jsonl.unreadable`]);
      const audit = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
      expect(audit).to.contain('"code":"RECOVERY_REQUIRED"');
      // The controller serves: another install goes through.
      await node.write(APP, 'old\n');
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'new\n' },
      ]);
      expect(answer.status, answer.text).to.equal(200);
    } finally {
      await node.dispose();
    }
  });
});

describe('install: a write failing before its rename leaves no orphan backup', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-orphan-'));
  });
  after(async () => rm(home, { recursive: true, force: true }));

  it('ENOSPC on the temp file (strace -e inject=openat:error=ENOSPC -P <temp>): IO_NOSPACE, the backup removed', async function () {
    requireSystemTools(this, [SYSTEM_TOOLS.strace], 'injects ENOSPC with strace');
    this.timeout(60_000);
    const { token } = await new TokenStore(statePaths(home), systemClock).issue({
      client: 'orphan-test',
      scopes: ['config:install', 'config:read'],
    });
    const path = join(home, '.config/fixture/app.conf');
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, 'old\n', { mode: 0o600 });
    const operationId = newId();
    const temp = join(dirname(path), `.fleet-tmp-${operationId}-0`);
    const child = await spawnController(
      home,
      { UV_USE_IO_URING: '0' },
      {
        prefix: ['strace', '-f', '-o', '/dev/null', '-P', temp, '-e', 'inject=openat:error=ENOSPC'],
      },
    );
    try {
      const answer = await call(child.url, '/v1/install', {
        token,
        body: {
          operationId,
          domain: 'fixture',
          files: [
            { fileId: 'app.conf', path: APP, expectedSha256: sha256('old\n'), content: 'new\n' },
          ],
          parameters: {},
        },
      });
      expect(answer.status, answer.text).to.equal(507);
      expect(answer.body.error.code).to.equal('IO_NOSPACE');
      expect(await readFile(path, 'utf8')).to.equal('old\n');
      const backups = await readdir(join(home, STATE, 'backups', 'fixture')).catch(() => []);
      expect(backups.filter((name) => name.includes(operationId))).to.deep.equal([]);
      expect(backups).to.deep.equal([]);
    } finally {
      // strace passes no SIGTERM on to the controller: end the traced controller itself.
      const pid = child.process.pid as number;
      const tracee = Number((await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim());
      if (tracee > 0) process.kill(tracee, 'SIGTERM');
      await child.exited;
    }
  });
});
