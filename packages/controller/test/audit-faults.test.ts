/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON; the assertions navigate them as plain data. */
/**
 * The audit log under real faults, in a controller of its own process (contract §15;
 * docs/audit-log.md; catalogue 25, 26): a file-size limit (`ulimit -f`: a short write, then
 * EFBIG), a really full tmpfs (a short write, then ENOSPC — twice, which used to truncate the file
 * *up* into a hole), and fsync EIO injected with strace, on the log and on an install's temp file.
 * Each time: the operation is not done, the log ends on its last whole record, health is degraded
 * and the process goes on.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, open, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { verifyAuditChain } from '@fleet/core';
import { systemClock } from '../src/context.js';
import { statePaths } from '../src/state-paths.js';
import { TokenStore } from '../src/tokens/store.js';
import { spawnController, type ChildController } from './support/child.js';
import { sha256 } from './support/install.js';
import { call, newId } from './support/node.js';
import { requireTool, skipBecause } from './support/tools.js';

const STATE = '.local/state/fleet';
const APP = '~/.config/fixture/app.conf';

interface Fixture {
  readonly home: string;
  readonly token: string;
}

async function makeHome(): Promise<Fixture> {
  const home = await mkdtemp(join(tmpdir(), 'fleet-faults-'));
  const { token } = await new TokenStore(statePaths(home), systemClock).issue({
    client: 'faults',
    scopes: ['config:install', 'config:read'],
  });
  await mkdir(join(home, '.config', 'fixture'), { recursive: true, mode: 0o700 });
  await writeFile(join(home, '.config', 'fixture', 'app.conf'), 'zero\n', { mode: 0o600 });
  return { home, token };
}

function installOf(home: string, content: string, before: string, operationId = newId()) {
  return {
    operationId,
    domain: 'fixture',
    files: [{ fileId: 'app.conf', path: APP, expectedSha256: sha256(before), content }],
    parameters: {},
  };
}

async function healthOf(url: string, token: string) {
  const answer = await call(url, '/v1/health', { token });
  expect(answer.status, answer.text).to.equal(200);
  return answer.body as { status: string; checks: { name: string; detail: string }[] };
}

/** A hash chain of `count` plausible records, as the log's text. */
function chain(count: number): string {
  let prev = '0'.repeat(64);
  let text = '';
  for (let seq = 1; seq <= count; seq += 1) {
    const line = JSON.stringify({
      seq,
      ts: new Date().toISOString(),
      prev,
      operationId: null,
      client: 'faults',
      operation: 'export',
      paths: [APP],
      files: [],
      outcome: 'ok',
      code: null,
      detail: 'export; answered 200',
    });
    prev = sha256(line);
    text += `${line}\n`;
  }
  return text;
}

describe('audit log under real faults', function () {
  this.timeout(60_000);
  let fixture: Fixture;
  let child: ChildController | undefined;
  const logPath = () => join(fixture.home, STATE, 'audit.jsonl');

  beforeEach(async () => {
    fixture = await makeHome();
  });
  afterEach(async () => {
    await child?.stop();
    child = undefined;
    await rm(fixture.home, { recursive: true, force: true });
  });

  it('ulimit -f: a short write then EFBIG mid-append — the install is undone, 503, the log cut back, health degraded, the process alive', async () => {
    // The limit in bytes, as this shell counts `ulimit -f` blocks.
    const probe = join(fixture.home, 'limit-probe');
    spawnSync('sh', ['-c', `ulimit -f 16; head -c 100000 /dev/zero > '${probe}'`]);
    const limit = (await stat(probe)).size;
    await unlink(probe);
    // A log whose next install record crosses the limit: the write is cut short by the kernel.
    let padded = '';
    for (let n = 1; Buffer.byteLength(chain(n + 1)) < limit - 120; n += 1) padded = chain(n + 1);
    await mkdir(dirname(logPath()), { recursive: true });
    await writeFile(logPath(), padded, { mode: 0o600 });
    child = await spawnController(
      fixture.home,
      {},
      {
        prefix: ['sh', '-c', 'ulimit -f 16; exec "$0" "$@"'],
      },
    );
    const answer = await call(child.url, '/v1/install', {
      token: fixture.token,
      body: installOf(fixture.home, 'one\n', 'zero\n'),
    });
    expect([answer.status, answer.body.error.code], answer.text).to.deep.equal([
      503,
      'AUDIT_UNAVAILABLE',
    ]);
    expect(answer.body.error.message).to.match(/short write|EFBIG/);
    expect(await readFile(join(fixture.home, '.config/fixture/app.conf'), 'utf8')).to.equal(
      'zero\n',
    );
    expect(await readFile(logPath(), 'utf8')).to.equal(padded); // cut back to the last record
    const health = await healthOf(child.url, fixture.token);
    expect(health.status).to.equal('degraded');
    const audit = health.checks.find((c) => c.name === 'audit-log');
    expect(audit?.detail).to.contain('the partial record was cut back');
    expect(child.process.exitCode).to.equal(null);
  });

  it('a really full tmpfs, twice: no hole, whole records only, health degraded; writes resume when there is room', async function () {
    if (process.platform !== 'linux') skipBecause(this, 'a tmpfs in a mount namespace needs Linux');
    requireTool(this, 'unshare', 'util-linux', 'the full-disk test mounts a tmpfs', [
      '-rm',
      'true',
    ]);
    const state = join(fixture.home, STATE);
    const seed = `${state}.seed`;
    await mkdir(state, { recursive: true, mode: 0o700 });
    const { rename } = await import('node:fs/promises');
    await rename(state, seed);
    await mkdir(state, { mode: 0o700 });
    child = await spawnController(
      fixture.home,
      {},
      {
        prefix: [
          'unshare',
          '-rm',
          'sh',
          '-c',
          `mount -t tmpfs -o size=256k,mode=0700 tmpfs '${state}' && cp -a '${seed}/.' '${state}/' && exec "$0" "$@"`,
        ],
      },
    );
    // The child's view of its tmpfs, from outside its mount namespace.
    const inside = (name: string) => join(`/proc/${child?.process.pid}/root`, state, name);
    const { token } = fixture;
    // A log that does not end on a page boundary: the last page has some room left.
    await call(child.url, '/v1/install', {
      token,
      body: { ...installOf(fixture.home, 'x\n', 'zero\n'), domain: 'nope' },
    });
    if ((await stat(inside('audit.jsonl'))).size % 4096 === 0) {
      await call(child.url, '/v1/install', {
        token,
        body: { ...installOf(fixture.home, 'x\n', 'zero\n'), domain: 'nope' },
      });
    }
    const before = await readFile(inside('audit.jsonl'), 'utf8');
    expect(Buffer.byteLength(before) % 4096).to.not.equal(0);
    // Fill the filesystem to the last byte.
    const filler = await open(inside('filler'), 'w');
    const block = Buffer.alloc(4096, 0x41);
    try {
      for (;;) {
        const { bytesWritten } = await filler.write(block);
        if (bytesWritten < block.length) break;
      }
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).to.equal('ENOSPC');
    } finally {
      await filler.close();
    }
    // Two installs: each fails at its journal (ENOSPC), and its failure record meets a short
    // write, then ENOSPC. The second must not cut the file *up* past where the first left it.
    // A read naming 64 long paths waits for the next write: their group is larger than a page,
    // so it never fits the room left, and the kernel writes part of it.
    const paths = Array.from({ length: 64 }, (_, i) => `~/.config/fixture/${'p'.repeat(90)}${i}`);
    for (let i = 0; i < 2; i += 1) {
      const read = await call(child.url, '/v1/snapshot', {
        token,
        body: { files: paths.map((path) => ({ domain: 'fixture', path })), backups: false },
      });
      expect(read.status, read.text).to.equal(200);
      const refused = await call(child.url, '/v1/install', {
        token,
        body: installOf(fixture.home, 'one\n', 'zero\n'),
      });
      // (The journal's ENOSPC is answered 500 today — catalogue 25 is another part of issue 11.)
      expect(refused.status, refused.text).to.be.oneOf([500, 503, 507]);
    }
    const after = await readFile(inside('audit.jsonl'), 'utf8');
    expect(after).to.not.contain('\u0000');
    expect(after).to.equal(before);
    expect(verifyAuditChain(after).ok).to.equal(true);
    const health = await healthOf(child.url, token);
    expect(health.status).to.equal('degraded');
    const detail = health.checks.find((c) => c.name === 'audit-log')?.detail;
    expect(detail).to.match(/\(\d+ failures since start\)/);
    // Why, while it lasts: the records that could not be written, counted (what `fleet status` lists).
    expect(detail, detail).to.match(
      /\d+ record\(s\) could not be appended since \S+ \((ENOSPC|short write)/,
    );
    const summary = await call(child.url, '/v1/summary', { token });
    expect((summary.body as { health: string }).health).to.equal('degraded');
    // Room again: the next install is written and audited, after one record of what could not
    // be; health stays degraded until restart.
    await unlink(inside('filler'));
    const ok = await call(child.url, '/v1/install', {
      token,
      body: installOf(fixture.home, 'one\n', 'zero\n'),
    });
    expect(ok.status, ok.text).to.equal(200);
    const text = await readFile(inside('audit.jsonl'), 'utf8');
    expect(verifyAuditChain(text).ok).to.equal(true);
    const written = text
      .slice(before.length)
      .trimEnd()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { operation: string; code: string | null; detail: string },
      );
    const refusedAt = written.findIndex((r) => r.operation === 'audit.refused-appends');
    expect(refusedAt, JSON.stringify(written)).to.be.greaterThanOrEqual(0);
    expect(written[refusedAt]?.code).to.equal('AUDIT_UNAVAILABLE');
    expect(written[refusedAt]?.detail).to.match(
      /^\d+ record\(s\) could not be appended between \S+ and \S+ \((ENOSPC|short write).*\): .*install/,
    );
    expect(written.findIndex((r) => r.operation === 'install')).to.be.greaterThan(refusedAt);
    const healthAfter = await healthOf(child.url, token);
    expect(healthAfter.status).to.equal('degraded');
    expect(healthAfter.checks.find((c) => c.name === 'audit-log')?.detail).to.not.match(
      /could not be appended since/,
    );
  });

  it('strace: fsync EIO on the audit log — the install is undone, 503, and every later write refused (volume suspect)', async function () {
    requireTool(this, 'strace', 'strace', 'fsync EIO is injected with strace');
    await mkdir(dirname(logPath()), { recursive: true });
    child = await spawnController(
      fixture.home,
      { UV_USE_IO_URING: '0' },
      {
        prefix: [
          'strace',
          '-f',
          '-o',
          '/dev/null',
          '-e',
          'inject=fsync:error=EIO',
          '-P',
          logPath(),
        ],
      },
    );
    const { token } = fixture;
    const first = await call(child.url, '/v1/install', {
      token,
      body: installOf(fixture.home, 'one\n', 'zero\n'),
    });
    expect([first.status, first.body.error.code], first.text).to.deep.equal([
      503,
      'AUDIT_UNAVAILABLE',
    ]);
    expect(await readFile(join(fixture.home, '.config/fixture/app.conf'), 'utf8')).to.equal(
      'zero\n',
    );
    const second = await call(child.url, '/v1/install', {
      token,
      body: installOf(fixture.home, 'one\n', 'zero\n'),
    });
    expect(second.body.error.code).to.equal('AUDIT_UNAVAILABLE');
    const health = await healthOf(child.url, token);
    expect(health.status).to.equal('degraded');
    expect(health.checks.find((c) => c.name === 'audit-log')?.detail).to.contain(
      'the volume is suspect',
    );
  });

  it('strace: fsync EIO on an install temp file — DURABILITY_FAILED, the file untouched, health degraded until a restart', async function () {
    requireTool(this, 'strace', 'strace', 'fsync EIO is injected with strace');
    const operationId = newId();
    const temp = join(fixture.home, '.config', 'fixture', `.fleet-tmp-${operationId}-0`);
    child = await spawnController(
      fixture.home,
      { UV_USE_IO_URING: '0' },
      {
        prefix: ['strace', '-f', '-o', '/dev/null', '-e', 'inject=fsync:error=EIO', '-P', temp],
      },
    );
    const { token } = fixture;
    const answer = await call(child.url, '/v1/install', {
      token,
      body: installOf(fixture.home, 'one\n', 'zero\n', operationId),
    });
    expect(answer.body.error?.code ?? answer.body.error, answer.text).to.equal('DURABILITY_FAILED');
    expect(await readFile(join(fixture.home, '.config/fixture/app.conf'), 'utf8')).to.equal(
      'zero\n',
    );
    const health = await healthOf(child.url, token);
    expect(health.status).to.equal('degraded');
    expect(health.checks.find((c) => c.name === 'volume')?.detail).to.contain(
      'the volume is suspect',
    );
    // A restart is the operator's act (docs/audit-log.md): the new process starts healthy.
    await child.stop();
    child = await spawnController(fixture.home);
    expect((await healthOf(child.url, token)).status).to.equal('ok');
  });
});
