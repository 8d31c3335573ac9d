/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * Other writers and readers racing an install (contract §8.4, §15):
 * - catalogue 19: the target deleted, or replaced by a directory, between the live-sha check and
 *   the backup → `PRECONDITION_FAILED` / `NOT_REGULAR_FILE`, and nothing is resurrected;
 * - catalogue 31: an external writer in the window after the final check (in place, by rename, or
 *   creating the file) → `PRECONDITION_FAILED`, the other writer's content is what stays
 *   (link-swap-verify, docs/durability.md);
 * - catalogue 32: installs racing exports and captures of the same file → every body read is the
 *   old or the new content, and is the content whose sha256 the answer claims.
 * The windows are opened with failpoint sleeps, and the test acts when the point is `reached` —
 * no guessing at timings — except for the strace test, which delays the rename system call itself.
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { SYSTEM_TOOLS, requireSystemTools, skipForEnvironment } from '@fleet/testkit';
import { defaultNodePolicy } from '@fleet/core';
import { reached } from '../src/failpoints.js';
import { writeNodePolicy } from '../src/index.js';
import { TEMP_PREFIX } from '../src/state-paths.js';
import { spawnController, type ChildController } from './support/child.js';
import { APP, SECOND } from './support/fixture-registry.js';
import { installBody, sha256, waitForFile, withFailpoint } from './support/install.js';
import { call, newId, startNode, type Answer, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';

describe('writers and readers racing an install', function () {
  this.timeout(60_000);
  let node: TestNode;
  let token: string;

  const tempsBeside = async (path: string) =>
    (await readdir(dirname(node.abs(path)))).filter((name) => name.startsWith(TEMP_PREFIX));
  const backups = async () =>
    readdir(join(node.home, STATE, 'backups', 'fixture')).catch(() => [] as string[]);
  /** I4: the operation has exactly one audit record, with this code. */
  const auditCodes = async (operationId: string) =>
    (await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8'))
      .split('\n')
      .filter((line) => line.includes(`"operationId":"${operationId}"`))
      .map((line) => (JSON.parse(line) as { code: string | null }).code);
  const errorOf = (answer: Answer): [number, string | undefined] => [
    answer.status,
    answer.body?.error?.code as string | undefined,
  ];

  /** Installs `content` at `path` with a failpoint sleep at `point`; `during` runs inside it. */
  async function installRacing(
    point: 'install.before_backup' | 'install.before_rename',
    path: string,
    content: string,
    during: () => Promise<void>,
  ): Promise<{ answer: Answer; operationId: string }> {
    const body = await installBody(node, 'fixture', [
      { path, fileId: path === APP ? 'app.conf' : 'second.conf', content },
    ]);
    const answer = await withFailpoint(`${point}:sleep(1500)`, async () => {
      const window = reached(point);
      const pending = node.call('/v1/install', { token, body });
      await window;
      await during();
      return pending;
    });
    return { answer, operationId: body.operationId };
  }

  beforeEach(async () => {
    node = await startNode();
    token = await node.issue(['config:install', 'config:read', 'config:adopt']);
  });
  afterEach(async () => node.dispose());

  describe('the target disappears or changes type after the check (catalogue 19)', () => {
    it('deleted before the backup: PRECONDITION_FAILED (now absent), and the file is not recreated', async () => {
      await node.write(APP, 'live\n');
      const { answer, operationId } = await installRacing(
        'install.before_backup',
        APP,
        'new\n',
        () => rm(node.abs(APP)),
      );
      expect(errorOf(answer), answer.text).to.deep.equal([412, 'PRECONDITION_FAILED']);
      expect(answer.body.error.liveSha256).to.equal(null);
      expect(answer.body.error.message).to.contain('changed during the install');
      expect(await lstat(node.abs(APP)).catch(() => 'absent'), 'no resurrection').to.equal(
        'absent',
      );
      expect(await tempsBeside(APP)).to.deep.equal([]);
      expect(await backups(), 'no orphan backup').to.deep.equal([]);
      expect(await auditCodes(operationId)).to.deep.equal(['PRECONDITION_FAILED']);
    });

    it('replaced by a directory before the backup: NOT_REGULAR_FILE, the directory left as it is', async () => {
      await node.write(APP, 'live\n');
      const { answer, operationId } = await installRacing(
        'install.before_backup',
        APP,
        'new\n',
        async () => {
          await rm(node.abs(APP));
          await mkdir(node.abs(APP));
          await writeFile(join(node.abs(APP), 'inside'), 'x');
        },
      );
      expect(errorOf(answer), answer.text).to.deep.equal([409, 'NOT_REGULAR_FILE']);
      expect((await lstat(node.abs(APP))).isDirectory()).to.equal(true);
      expect(await readdir(node.abs(APP))).to.deep.equal(['inside']);
      expect(await tempsBeside(APP)).to.deep.equal([]);
      expect(await backups()).to.deep.equal([]);
      expect(await auditCodes(operationId)).to.deep.equal(['NOT_REGULAR_FILE']);
    });
  });

  describe('an external writer after the final check (catalogue 31: link-swap-verify)', () => {
    it('written in place before the rename: PRECONDITION_FAILED, the edit is what stays', async () => {
      await node.write(APP, 'live\n');
      const edited = 'edited by hand, in place\n';
      const { answer, operationId } = await installRacing(
        'install.before_rename',
        APP,
        'new\n',
        () => writeFile(node.abs(APP), edited), // O_TRUNC on the same inode
      );
      expect(errorOf(answer), answer.text).to.deep.equal([412, 'PRECONDITION_FAILED']);
      expect(answer.body.error.message).to.contain('was written during the install');
      expect(answer.body.error.liveSha256).to.equal(sha256(edited));
      expect(await readFile(node.abs(APP), 'utf8')).to.equal(edited);
      expect(await tempsBeside(APP), 'temp and kept link removed').to.deep.equal([]);
      expect(await backups()).to.deep.equal([]);
      expect(await auditCodes(operationId)).to.deep.equal(['PRECONDITION_FAILED']);
    });

    it('replaced by rename before the rename: PRECONDITION_FAILED, the other file is what stays', async () => {
      await node.write(APP, 'live\n');
      const theirs = 'saved by an editor (write new, rename over)\n';
      const { answer } = await installRacing('install.before_rename', APP, 'new\n', async () => {
        await writeFile(`${node.abs(APP)}.swp`, theirs);
        await rename(`${node.abs(APP)}.swp`, node.abs(APP));
      });
      expect(errorOf(answer), answer.text).to.deep.equal([412, 'PRECONDITION_FAILED']);
      expect(answer.body.error.message).to.contain('was replaced during the install');
      expect(answer.body.error.liveSha256).to.equal(sha256(theirs));
      expect(await readFile(node.abs(APP), 'utf8')).to.equal(theirs);
      expect(await tempsBeside(APP)).to.deep.equal([]);
      expect(await backups()).to.deep.equal([]);
    });

    it('created by someone else while a new file is installed: PRECONDITION_FAILED, theirs stays', async () => {
      await mkdir(dirname(node.abs(SECOND)), { recursive: true, mode: 0o700 });
      const theirs = 'created meanwhile\n';
      const { answer } = await installRacing('install.before_rename', SECOND, 'ours\n', () =>
        writeFile(node.abs(SECOND), theirs),
      );
      expect(errorOf(answer), answer.text).to.deep.equal([412, 'PRECONDITION_FAILED']);
      expect(answer.body.error.message).to.contain('was created by someone else');
      expect(answer.body.error.liveSha256).to.equal(sha256(theirs));
      expect(await readFile(node.abs(SECOND), 'utf8')).to.equal(theirs);
      expect(await tempsBeside(SECOND)).to.deep.equal([]);
    });

    it('without a race the swap leaves no trace: new content, one backup, no temp or link', async () => {
      await node.write(APP, 'live\n');
      const { answer } = await installRacing('install.before_rename', APP, 'new\n', () =>
        Promise.resolve(),
      );
      expect(answer.status, answer.text).to.equal(200);
      expect(await readFile(node.abs(APP), 'utf8')).to.equal('new\n');
      expect((await stat(node.abs(APP))).nlink).to.equal(1);
      expect(await tempsBeside(APP)).to.deep.equal([]);
      expect(await backups()).to.have.length(1);
    });
  });

  describe('an in-place write while the rename system call is delayed (catalogue 31; strace)', () => {
    let child: ChildController | undefined;
    before(function () {
      requireSystemTools(this, [SYSTEM_TOOLS.strace], 'delays the rename system call with strace');
      try {
        requireWorkingStrace();
      } catch {
        skipForEnvironment(this, 'strace cannot trace here (ptrace is not permitted)', ['strace']);
      }
    });
    afterEach(async () => {
      await child?.stop();
      child = undefined;
    });

    it('is not lost: PRECONDITION_FAILED and the edit stays', async () => {
      await node.write(APP, 'live\n');
      const body = await installBody(node, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'new\n' },
      ]);
      const temp = join(dirname(node.abs(APP)), `${TEMP_PREFIX}${body.operationId}-0`);
      await node.controller.close(); // one controller per home: the traced one serves it now
      await writeNodePolicy(node.home, defaultNodePolicy(['fixture', 'coupled']), { force: true });
      child = await spawnController(
        node.home,
        { UV_USE_IO_URING: '0' },
        {
          prefix: [
            'strace',
            '-f',
            '-o',
            '/dev/null',
            '-e',
            'inject=rename:delay_enter=3s',
            '-P',
            temp,
            '--',
          ],
        },
      );
      const pending = call(child.url, '/v1/install', { token, body });
      await waitForFile(dirname(temp), `${TEMP_PREFIX}${body.operationId}-0`);
      // The final check and the link follow the temp file at once; the rename then waits 3 s.
      await sleep(800);
      const edited = 'edited while the rename was on its way\n';
      await writeFile(node.abs(APP), edited);
      const answer = await pending;
      expect(errorOf(answer), answer.text).to.deep.equal([412, 'PRECONDITION_FAILED']);
      expect(await readFile(node.abs(APP), 'utf8')).to.equal(edited);
      expect(await tempsBeside(APP)).to.deep.equal([]);
    });
  });

  it('installs racing exports and captures of one file (catalogue 32): every body is old or new and is what its sha256 says', async () => {
    // Several pages each, of different sizes: a read torn across a rename would show.
    const A = `${'A'.repeat(9000)}\n`;
    const B = `${'B'.repeat(14000)}\n`;
    await node.write(APP, A);
    const allowed = new Set([sha256(A), sha256(B)]);
    let installing = true;
    const installs = (async () => {
      let current = A;
      for (let i = 0; i < 16; i += 1) {
        const next = current === A ? B : A;
        const answer = await node.call('/v1/install', {
          token,
          body: {
            operationId: newId(),
            domain: 'fixture',
            files: [
              { fileId: 'app.conf', path: APP, expectedSha256: sha256(current), content: next },
            ],
            parameters: {},
          },
        });
        expect(answer.status, answer.text).to.equal(200);
        current = next;
      }
      installing = false;
    })();
    const reads: { sha256: string; content: string }[] = [];
    const reader = async (route: 'export' | 'capture') => {
      while (installing) {
        const answer = await node.call(`/v1/${route}`, {
          token,
          body: route === 'export' ? { path: APP } : { path: APP, operationId: newId() },
        });
        expect(answer.status, answer.text).to.equal(200);
        reads.push({ sha256: answer.body.sha256, content: answer.body.content });
      }
    };
    await Promise.all([installs, reader('export'), reader('export'), reader('capture')]);
    expect(reads.length, 'reads made while installing').to.be.greaterThan(16);
    for (const read of reads) {
      expect(allowed.has(read.sha256), 'claimed sha is old or new').to.equal(true);
      expect(sha256(read.content), 'body matches its claimed sha').to.equal(read.sha256);
    }
  });
});

function requireWorkingStrace(): void {
  // Throws when strace cannot attach here (a container without ptrace).
  execFileSync('strace', ['-f', '-o', '/dev/null', 'true'], { stdio: 'ignore', timeout: 10_000 });
}
