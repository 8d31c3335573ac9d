/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * I/O faults during an install, on a controller in its own process (contract §8.4, §15):
 * - catalogue 26: fsync of the temp file fails with EIO (strace injection) → `DURABILITY_FAILED`,
 *   the live file untouched, the temp file discarded, the fsync tried once, never again;
 * - catalogue 20: the rename fails with EXDEV (strace) → `IO_ERROR`, no fallback to a copy; the
 *   target's directory is read-only (a read-only bind mount in a mount namespace) → `IO_ERROR`
 *   before any backup is written;
 * - catalogue 25: the disk fills at each stage in turn (a real tmpfs as the home, in a mount
 *   namespace) → `IO_NOSPACE`; the file-size limit is hit (`ulimit -f`: EFBIG) → `IO_ERROR`.
 * Each time: the live file is the old content (same inode), no temp file and no orphan backup is
 * left, and the node takes the next install.
 *
 * strace targets the temp file by name (`-P`): temp names are `.fleet-tmp-<operation id>-<n>`
 * beside the target, and the test picks the operation id. `UV_USE_IO_URING=0` keeps libuv's fs
 * calls on system calls strace sees (reliability catalogue §1).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { SYSTEM_TOOLS, requireSystemTools, skipForEnvironment } from '@fleet/testkit';
import { systemClock } from '../src/context.js';
import { statePaths, TEMP_PREFIX } from '../src/state-paths.js';
import { TokenStore } from '../src/tokens/store.js';
import { spawnController, type ChildController } from './support/child.js';
import { sha256 } from './support/install.js';
import { call, newId, type Answer } from './support/node.js';

const APP = '~/.config/fixture/app.conf';
const STATE = '.local/state/fleet';
const OLD = 'old content\n';
const NEW = 'new content\n';
const NO_URING = { UV_USE_IO_URING: '0' };

/** True when `argv` runs and exits 0 here (a probe for what the kernel allows). */
function works(argv: readonly string[]): boolean {
  try {
    execFileSync(argv[0] as string, argv.slice(1), { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

interface Home {
  readonly home: string;
  readonly token: string;
  /** The live file's absolute path (`root` is where the test sees the home; default itself). */
  live(root?: string): string;
}

async function makeHome(content = OLD): Promise<Home> {
  const home = await mkdtemp(join(tmpdir(), 'fleet-faults-'));
  const { token } = await new TokenStore(statePaths(home), systemClock).issue({
    client: 'faults',
    scopes: ['config:install', 'config:read'],
  });
  const live = (root = home) => join(root, '.config/fixture/app.conf');
  await mkdir(dirname(live()), { recursive: true, mode: 0o700 });
  await writeFile(live(), content, { mode: 0o600 });
  return { home, token, live };
}

function installOf(operationId: string, before: string, content: string) {
  return {
    operationId,
    domain: 'fixture',
    files: [{ fileId: 'app.conf', path: APP, expectedSha256: sha256(before), content }],
    parameters: {},
  };
}

/** The temp file an install with this id creates first, beside the target. */
const tempOf = (home: Home, operationId: string, root?: string) =>
  join(dirname(home.live(root)), `${TEMP_PREFIX}${operationId}-0`);

/** What an install that failed must leave: the old bytes in the same inode, nothing else. */
async function expectUntouched(
  home: Home,
  before: { ino: number; content: string },
  root = home.home,
): Promise<void> {
  const live = home.live(root);
  expect(await readFile(live, 'utf8'), 'live content').to.equal(before.content);
  expect((await stat(live)).ino, 'same inode: no copy, no replace').to.equal(before.ino);
  const temps = (await readdir(dirname(live))).filter((name) => name.startsWith(TEMP_PREFIX));
  expect(temps, 'temp files').to.deep.equal([]);
  const backups = await readdir(join(root, STATE, 'backups', 'fixture')).catch(() => []);
  expect(backups, 'orphan backups').to.deep.equal([]);
}

/** The next install (a new operation id, no fault aimed at it) succeeds. */
async function expectNextInstallWorks(child: ChildController, home: Home, root = home.home) {
  const before = await readFile(home.live(root), 'utf8');
  const answer = await call(child.url, '/v1/install', {
    token: home.token,
    body: installOf(newId(), before, NEW),
  });
  expect(answer.status, answer.text).to.equal(200);
  expect(await readFile(home.live(root), 'utf8')).to.equal(NEW);
}

/** I4: exactly one audit record for the operation, with its code. */
async function expectOneAuditRecord(root: string, operationId: string, code: string) {
  const audit = await readFile(join(root, STATE, 'audit.jsonl'), 'utf8');
  const mine = audit
    .split('\n')
    .filter((line) => line.includes(`"operationId":"${operationId}"`))
    .map((line) => JSON.parse(line) as { code: string | null });
  expect(
    mine.map((record) => record.code),
    'audit records of the operation',
  ).to.deep.equal([code]);
}

const errorOf = (answer: Answer): [number, string | undefined] => [
  answer.status,
  (answer.body as { error?: { code?: string } } | undefined)?.error?.code,
];

describe('I/O faults during an install', function () {
  this.timeout(60_000);
  let child: ChildController | undefined;
  const homes: string[] = [];
  const track = (home: Home) => {
    homes.push(home.home);
    return home;
  };
  afterEach(async () => {
    await child?.stop();
    child = undefined;
  });
  after(async () => {
    for (const home of homes) await rm(home, { recursive: true, force: true });
  });

  describe('injected system-call errors (strace)', () => {
    before(function () {
      requireSystemTools(this, [SYSTEM_TOOLS.strace], 'injects errno values with strace');
      if (!works(['strace', '-f', '-o', '/dev/null', 'true'])) {
        skipForEnvironment(this, 'strace cannot trace here (ptrace is not permitted)', ['strace']);
      }
    });

    it('fsync EIO on the temp file (catalogue 26): DURABILITY_FAILED, live untouched, temp discarded, fsync not retried', async () => {
      const home = track(await makeHome());
      const operationId = newId();
      const temp = tempOf(home, operationId);
      const log = join(home.home, 'strace.log');
      const before = { ino: (await stat(home.live())).ino, content: OLD };
      child = await spawnController(home.home, NO_URING, {
        prefix: [
          'strace',
          '-f',
          '-o',
          log,
          '-e',
          'trace=fsync,fdatasync',
          '-e',
          'inject=fsync,fdatasync:error=EIO',
          '-P',
          temp,
          '--',
        ],
      });
      const answer = await call(child.url, '/v1/install', {
        token: home.token,
        body: installOf(operationId, OLD, NEW),
      });
      expect(errorOf(answer), answer.text).to.deep.equal([500, 'DURABILITY_FAILED']);
      expect(answer.body.error.message).to.contain('not retried');
      await expectUntouched(home, before);
      const syncs = (await readFile(log, 'utf8')).split('\n').filter((l) => /sync\(/.test(l));
      expect(syncs, 'one fsync of the temp file, failed, never retried').to.have.length(1);
      expect(syncs[0]).to.match(/EIO.*INJECTED/);
      await expectNextInstallWorks(child, home);
    });

    it('rename EXDEV (catalogue 20): IO_ERROR, no fallback to a non-atomic copy, no litter', async () => {
      const home = track(await makeHome());
      const operationId = newId();
      const before = { ino: (await stat(home.live())).ino, content: OLD };
      child = await spawnController(home.home, NO_URING, {
        prefix: [
          'strace',
          '-f',
          '-o',
          '/dev/null',
          '-e',
          'inject=rename,renameat,renameat2:error=EXDEV',
          '-P',
          tempOf(home, operationId),
          '--',
        ],
      });
      const answer = await call(child.url, '/v1/install', {
        token: home.token,
        body: installOf(operationId, OLD, NEW),
      });
      expect(errorOf(answer), answer.text).to.deep.equal([500, 'IO_ERROR']);
      expect(answer.body.error.message).to.contain('EXDEV');
      await expectUntouched(home, before);
      await expectNextInstallWorks(child, home);
    });
  });

  describe('a read-only target directory (catalogue 20; a bind mount in a mount namespace)', () => {
    before(function () {
      requireSystemTools(this, [SYSTEM_TOOLS.unshare], 'mounts in a private mount namespace');
      if (!works(['unshare', '-rm', 'true'])) {
        skipForEnvironment(this, 'unshare -rm is not permitted here (user namespaces off?)', [
          'util-linux',
        ]);
      }
    });

    it('answers IO_ERROR before any backup is written, and nothing changes', async () => {
      const home = track(await makeHome());
      const before = { ino: (await stat(home.live())).ino, content: OLD };
      child = await spawnController(
        home.home,
        { READ_ONLY: dirname(home.live()) },
        {
          prefix: [
            'unshare',
            '-rm',
            'sh',
            '-c',
            'mount --bind "$READ_ONLY" "$READ_ONLY" && mount -o remount,bind,ro "$READ_ONLY" && exec "$@"',
            'sh',
          ],
        },
      );
      const answer = await call(child.url, '/v1/install', {
        token: home.token,
        body: installOf(newId(), OLD, NEW),
      });
      expect(errorOf(answer), answer.text).to.deep.equal([500, 'IO_ERROR']);
      expect(answer.body.error.message).to.match(/EROFS|EACCES/);
      await expectUntouched(home, before);
      const backups = await stat(join(home.home, STATE, 'backups', 'fixture')).catch(() => null);
      expect(backups, 'no backup was even begun: its directory was never made').to.equal(null);
      const audit = await readFile(join(home.home, STATE, 'audit.jsonl'), 'utf8');
      expect(audit).to.contain('"code":"IO_ERROR"');
    });
  });
  describe('disk full at each stage (catalogue 25; a tmpfs home in a mount namespace)', () => {
    before(function () {
      requireSystemTools(this, [SYSTEM_TOOLS.unshare], 'mounts a tmpfs in a mount namespace');
      if (!works(['unshare', '-rm', 'true'])) {
        skipForEnvironment(this, 'unshare -rm is not permitted here (user namespaces off?)', [
          'util-linux',
        ]);
      }
    });

    /** Three 4 KiB pages: a stage that writes it needs more than one free page. */
    const BIG = `${'x'.repeat(10_000)}\n`;

    /**
     * A home on a fresh 4 MiB tmpfs, copied from a staged one (with one install done, so the audit
     * log has room left in its last page), served by a controller in the namespace. The test sees
     * the tmpfs through `/proc/<pid>/root`.
     */
    async function tmpfsNode(): Promise<{ home: Home; child: ChildController; view: string }> {
      const stage = track(await makeHome());
      const warm = await spawnController(stage.home);
      const first = await call(warm.url, '/v1/install', {
        token: stage.token,
        body: installOf(newId(), OLD, NEW),
      });
      await warm.stop();
      expect(first.status, first.text).to.equal(200);
      const mountpoint = await mkdtemp(join(tmpdir(), 'fleet-tmpfs-'));
      homes.push(mountpoint);
      const home: Home = { home: mountpoint, token: stage.token, live: (root) => stage.live(root) };
      const node = await spawnController(
        mountpoint,
        { STAGE: stage.home },
        {
          prefix: [
            'unshare',
            '-rm',
            'sh',
            '-c',
            'mount -t tmpfs -o size=4m,mode=0700 tmpfs "$FIXTURE_HOME" && cp -a "$STAGE"/. "$FIXTURE_HOME"/ && exec "$@"',
            'sh',
          ],
        },
      );
      return { home, child: node, view: `/proc/${node.process.pid}/root${mountpoint}` };
    }

    /** Fills the tmpfs until exactly `pages` blocks are free. */
    async function leaveFree(view: string, pages: number): Promise<void> {
      const { bsize, bavail } = await statfs(view);
      await writeFile(join(view, 'ballast'), Buffer.alloc((bavail - pages) * bsize));
      expect((await statfs(view)).bavail, 'free blocks left').to.equal(pages);
    }

    const STAGES = [
      { stage: 'the operation journal', free: 0 },
      { stage: 'the backup', free: 1 },
      { stage: 'the temp file', free: 2 },
    ];
    for (const { stage, free } of STAGES) {
      it(`ENOSPC writing ${stage} (${free} free page${free === 1 ? '' : 's'}): IO_NOSPACE, live and backups untouched, no temp, then the next install works`, async () => {
        const node = await tmpfsNode();
        child = node.child;
        const { home, view } = node;
        const before = { ino: (await stat(home.live(view))).ino, content: NEW };
        const backups = await readdir(join(view, STATE, 'backups', 'fixture'));
        await leaveFree(view, free);
        const operationId = newId();
        const answer = await call(child.url, '/v1/install', {
          token: home.token,
          body: installOf(operationId, NEW, BIG),
        });
        expect(errorOf(answer), answer.text).to.deep.equal([507, 'IO_NOSPACE']);
        expect(await readFile(home.live(view), 'utf8')).to.equal(NEW);
        expect((await stat(home.live(view))).ino).to.equal(before.ino);
        const temps = (await readdir(dirname(home.live(view)))).filter((n) =>
          n.startsWith(TEMP_PREFIX),
        );
        expect(temps, 'temp files').to.deep.equal([]);
        expect(await readdir(join(view, STATE, 'backups', 'fixture')), 'backups').to.deep.equal(
          backups,
        );
        await expectOneAuditRecord(view, operationId, 'IO_NOSPACE');
        // A journal left (its record could not be stored either) holds the answer: the next
        // start completes the record from it.
        const journal = await readFile(
          join(view, STATE, 'journal', `${operationId}.jsonl`),
          'utf8',
        ).catch(() => null);
        if (journal !== null) expect(journal).to.contain('"event":"outcome"');

        await rm(join(view, 'ballast'));
        const retry = await call(child.url, '/v1/install', {
          token: home.token,
          body: installOf(newId(), NEW, BIG),
        });
        expect(retry.status, retry.text).to.equal(200);
        expect(await readFile(home.live(view), 'utf8')).to.equal(BIG);
      });
    }

    it('ENOSPC journaling the outcome, after the rename (5 free pages): the write is undone, IO_NOSPACE', async () => {
      const node = await tmpfsNode();
      child = node.child;
      const { home, view } = node;
      // The journal takes a page, the backup one, the temp file three; the rename frees the old
      // file's page, and the outcome (its receipt carries the 10 KB diff) needs three.
      await leaveFree(view, 5);
      const operationId = newId();
      const answer = await call(child.url, '/v1/install', {
        token: home.token,
        body: installOf(operationId, NEW, BIG),
      });
      expect(errorOf(answer), answer.text).to.deep.equal([507, 'IO_NOSPACE']);
      expect(await readFile(home.live(view), 'utf8'), 'restored').to.equal(NEW);
      const temps = (await readdir(dirname(home.live(view)))).filter((n) =>
        n.startsWith(TEMP_PREFIX),
      );
      expect(temps, 'temp files').to.deep.equal([]);
      await expectOneAuditRecord(view, operationId, 'IO_NOSPACE');
      // The journal was cut back to whole lines: it says the file was written, then restored.
      const journal = await readFile(join(view, STATE, 'journal', `${operationId}.jsonl`), 'utf8');
      expect(journal.endsWith('\n')).to.equal(true);
      const events = journal
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event: string }).event);
      expect(events).to.deep.equal(['begin', 'write', 'renamed', 'restored']);

      await rm(join(view, 'ballast'));
      const retry = await call(child.url, '/v1/install', {
        token: home.token,
        body: installOf(newId(), NEW, BIG),
      });
      expect(retry.status, retry.text).to.equal(200);
    });

    it('EFBIG writing the temp file (ulimit -f): IO_ERROR, live untouched, no temp, no orphan backup', async () => {
      const home = track(await makeHome());
      const before = { ino: (await stat(home.live())).ino, content: OLD };
      child = await spawnController(
        home.home,
        {},
        { prefix: ['sh', '-c', 'ulimit -f 16 && exec "$@"', 'sh'] },
      );
      const answer = await call(child.url, '/v1/install', {
        token: home.token,
        body: installOf(newId(), OLD, BIG),
      });
      expect(errorOf(answer), answer.text).to.deep.equal([500, 'IO_ERROR']);
      expect(answer.body.error.message).to.contain('EFBIG');
      await expectUntouched(home, before);
      await expectNextInstallWorks(child, home);
    });
  });
});
