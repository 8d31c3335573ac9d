/**
 * Backup names never collide (contract §8.4; reliability catalogue 68): a backup's file id is a
 * readable stem and a hash of the whole id, so `é` and `ü`, or `a/b` and `a_b`, never share a
 * group and one file's installs never prune the other's backups; backups named before the hash
 * are still found, and one whose stem could be another file's is never pruned.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backupFileId,
  isBackupOf,
  parseBackupName,
  pruneBackups,
  writeBackup,
} from '../src/backups.js';

const OP = '01HZY3M5Q8R2T7V9W4X6Y0Z1AB';

describe('backup names', () => {
  const pairs: [a: string, b: string][] = [
    ['~/notes/é.md', '~/notes/ü.md'],
    ['~/a/b', '~/a_b'],
    ['a/b', 'a_b'],
    ['router.yaml', 'router_yaml'],
  ];
  for (const [a, b] of pairs) {
    it(`${a} and ${b} get different backup ids`, () => {
      expect(backupFileId(a)).to.not.equal(backupFileId(b));
      expect(isBackupOf(backupFileId(a), b)).to.equal(false);
    });
  }

  it('keeps a readable stem beside the hash, and a name the parser reads back', () => {
    expect(backupFileId('router.yaml')).to.match(/^router\.yaml-[0-9a-f]{16}$/);
    expect(backupFileId('~/.config/nvim/init.lua')).to.match(
      /^__\.config_nvim_init\.lua-[0-9a-f]{16}$/,
    );
    expect(backupFileId(`~/${'x'.repeat(300)}`)).to.have.length(48 + 1 + 16);
    const name = `${backupFileId('~/notes/é.md')}.20260101T000000Z.${OP}.000.bak`;
    expect(parseBackupName(name)?.fileId).to.equal(backupFileId('~/notes/é.md'));
  });

  it('still finds a backup named before the hash', () => {
    expect(isBackupOf('router.yaml', 'router.yaml')).to.equal(true);
    expect(isBackupOf('__notes__.md', '~/notes/é.md')).to.equal(true);
    expect(isBackupOf('__notes__.md', '~/notes/ü.md')).to.equal(true); // ambiguous: kept, never pruned
  });
});

describe('backup pruning', () => {
  let home: string;
  let dir: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-backups-'));
    dir = join(home, '.local/state/fleet/backups/files');
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  async function install(fileId: string, at: number): Promise<string> {
    const path = await writeBackup(home, dir, {
      fileId,
      operationId: OP,
      now: new Date(Date.UTC(2026, 0, 1, 0, 0, at)),
      bytes: Buffer.from(`${fileId} ${at}\n`),
    });
    const newest = path.slice(dir.length + 1);
    await pruneBackups(home, dir, fileId, 10, newest);
    return newest;
  }

  for (const [a, b] of [
    ['~/notes/é.md', '~/notes/ü.md'],
    ['~/a/b', '~/a_b'],
  ] as const) {
    it(`eleven installs of ${a} keep ten of its backups and prune none of ${b}'s`, async () => {
      const other = await install(b, 0);
      for (let at = 1; at <= 11; at += 1) await install(a, at);
      const names = await readdir(dir);
      expect(names).to.include(other);
      expect(
        names.filter((name) => parseBackupName(name)?.fileId === backupFileId(a)),
      ).to.have.length(10);
    });
  }

  it('prunes an old-style backup of its own file, never one whose stem two files share', async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const ownOld = `router.yaml.20250101T000000Z.${OP}.000.bak`;
    const sharedOld = `__a_b.20250101T000000Z.${OP}.000.bak`;
    await writeFile(join(dir, ownOld), 'old\n', { mode: 0o600 });
    await writeFile(join(dir, sharedOld), 'old\n', { mode: 0o600 });
    for (let at = 1; at <= 11; at += 1) await install('router.yaml', at);
    for (let at = 1; at <= 11; at += 1) await install('~/a/b', at);
    const names = await readdir(dir);
    expect(names).to.not.include(ownOld);
    expect(names).to.include(sharedOld);
  });
});
