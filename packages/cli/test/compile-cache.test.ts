/**
 * The entry's compile cache (src/compile-cache.ts): where it lives, which directories it refuses
 * to run code from, and that a real `fleet` call fills it with Node's module cache on Node.js 22.1
 * and later (CI's second run) and writes nothing on an older Node.js, which has none.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  COMPILE_CACHE_FOLDER,
  enableCompileCache,
  fleetCacheDirectory,
  unsafeDirectoryReason,
  type EnableCompileCache,
} from '../src/compile-cache.js';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const ENABLED = 1;
const FAILED = 0;

describe('the CLI entry: V8 compile cache', () => {
  describe('fleetCacheDirectory: oclif’s cache directory for the bin `fleet`', () => {
    const cases: [string, Parameters<typeof fleetCacheDirectory>[0], string][] = [
      [
        'Linux default',
        { env: {}, platform: 'linux', home: '/home/ann' },
        '/home/ann/.cache/fleet',
      ],
      [
        'XDG_CACHE_HOME',
        { env: { XDG_CACHE_HOME: '/xdg' }, platform: 'linux', home: '/home/ann' },
        '/xdg/fleet',
      ],
      [
        'FLEET_CACHE_DIR wins',
        { env: { FLEET_CACHE_DIR: '/c', XDG_CACHE_HOME: '/xdg' }, platform: 'linux', home: '/h' },
        '/c',
      ],
      [
        'macOS',
        { env: { XDG_CACHE_HOME: '/xdg' }, platform: 'darwin', home: '/Users/ann' },
        '/Users/ann/Library/Caches/fleet',
      ],
      [
        'Windows LOCALAPPDATA',
        {
          env: { LOCALAPPDATA: 'C:\\Users\\ann\\AppData\\Local' },
          platform: 'win32',
          home: 'C:\\Users\\ann',
        },
        'C:\\Users\\ann\\AppData\\Local\\fleet',
      ],
      [
        'Windows without LOCALAPPDATA',
        { env: {}, platform: 'win32', home: 'C:\\Users\\ann' },
        'C:\\Users\\ann\\.cache\\fleet',
      ],
    ];
    for (const [name, location, expected] of cases) {
      it(`${name}: ${expected}`, () => {
        expect(fleetCacheDirectory(location)).to.equal(expected);
      });
    }
  });

  describe('unsafeDirectoryReason: code runs only from a directory of the user’s own', () => {
    const stats = (over: { dir?: boolean; link?: boolean; uid?: number; mode?: number }) => ({
      isDirectory: () => over.dir ?? true,
      isSymbolicLink: () => over.link ?? false,
      uid: over.uid ?? 1000,
      mode: over.mode ?? 0o40700,
    });
    const cases: [string, ReturnType<typeof stats>, number | undefined, RegExp | undefined][] = [
      ['a private directory of the user', stats({}), 1000, undefined],
      ['0755 of the user', stats({ mode: 0o40755 }), 1000, undefined],
      ['a symbolic link', stats({ link: true, dir: false }), 1000, /symbolic link/],
      ['a file', stats({ dir: false }), 1000, /not a directory/],
      ['another user’s', stats({ uid: 0 }), 1000, /belongs to uid 0, not 1000/],
      ['group-writable', stats({ mode: 0o40770 }), 1000, /others may write to it \(mode 770\)/],
      ['world-writable', stats({ mode: 0o41777 }), 1000, /mode 777/],
      [
        'Windows (no uid): the profile’s ACLs decide',
        stats({ mode: 0o40777 }),
        undefined,
        undefined,
      ],
    ];
    for (const [name, stat, uid, reason] of cases) {
      it(`${name}: ${reason ? 'refused' : 'used'}`, () => {
        const got = unsafeDirectoryReason(stat, uid);
        if (reason) expect(got).to.match(reason);
        else expect(got).to.equal(undefined);
      });
    }
  });

  describe('enableCompileCache', () => {
    let root: string;
    let calls: string[];
    const recording =
      (status: number, message?: string): EnableCompileCache =>
      (directory) => {
        calls.push(directory);
        return message === undefined ? { status } : { status, message };
      };
    const options = (extra: Partial<Parameters<typeof enableCompileCache>[0]> = {}) => ({
      env: { FLEET_CACHE_DIR: join(root, 'cache') },
      currentDirectory: () => undefined,
      enable: recording(ENABLED),
      ...extra,
    });
    const cacheDir = () => join(root, 'cache', COMPILE_CACHE_FOLDER);

    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'fleet-compile-cache-'));
      calls = [];
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('creates a private directory in fleet’s cache directory and enables the cache there', () => {
      expect(enableCompileCache(options())).to.deep.equal({
        status: 'enabled',
        directory: cacheDir(),
      });
      expect(calls).to.deep.equal([cacheDir()]);
      if (process.platform !== 'win32') expect(statSync(cacheDir()).mode & 0o777).to.equal(0o700);
    });

    it('on a Node.js without the module cache (before 22.1), creates nothing', () => {
      expect(enableCompileCache(options({ enable: undefined }))).to.deep.equal({
        status: 'unsupported',
      });
      expect(existsSync(join(root, 'cache'))).to.equal(false);
    });

    it('honours NODE_DISABLE_COMPILE_CACHE before touching the disk', () => {
      const env = { FLEET_CACHE_DIR: join(root, 'cache'), NODE_DISABLE_COMPILE_CACHE: '1' };
      expect(enableCompileCache(options({ env }))).to.deep.equal({ status: 'disabled' });
      expect(calls).to.deep.equal([]);
      expect(existsSync(join(root, 'cache'))).to.equal(false);
    });

    it('leaves a module cache the user turned on with NODE_COMPILE_CACHE alone', () => {
      const outcome = enableCompileCache(options({ currentDirectory: () => '/theirs' }));
      expect(outcome).to.deep.equal({ status: 'already-enabled', directory: '/theirs' });
      expect(calls).to.deep.equal([]);
    });

    if (process.platform !== 'win32') {
      it('refuses a directory others may write to, and does not enable the cache', () => {
        mkdirSync(cacheDir(), { recursive: true });
        chmodSync(cacheDir(), 0o777);
        const outcome = enableCompileCache(options());
        expect(outcome).to.deep.include({ status: 'refused', directory: cacheDir() });
        expect(outcome)
          .to.have.property('reason')
          .that.match(/others may write to it/);
        expect(calls).to.deep.equal([]);
      });

      it('refuses a symbolic link in place of the directory', () => {
        mkdirSync(join(root, 'cache'));
        mkdirSync(join(root, 'elsewhere'), { mode: 0o700 });
        symlinkSync(join(root, 'elsewhere'), cacheDir());
        const outcome = enableCompileCache(options());
        expect(outcome).to.deep.include({ status: 'refused', reason: 'it is a symbolic link' });
        expect(calls).to.deep.equal([]);
      });

      it('refuses a directory of another user', () => {
        const uid = (process.getuid?.() ?? 0) + 1;
        const outcome = enableCompileCache(options({ uid }));
        expect(outcome).to.have.property('status', 'refused');
        expect(outcome)
          .to.have.property('reason')
          .that.match(/belongs to uid/);
        expect(calls).to.deep.equal([]);
      });
    }

    it('reports Node’s refusal without throwing', () => {
      const outcome = enableCompileCache(options({ enable: recording(FAILED, 'no space') }));
      expect(outcome).to.deep.equal({
        status: 'failed',
        directory: cacheDir(),
        reason: 'no space',
      });
    });

    it('reports a directory it cannot create without throwing', () => {
      const env = { FLEET_CACHE_DIR: join(root, 'a-file') };
      writeFileSync(env.FLEET_CACHE_DIR, '');
      const outcome = enableCompileCache(options({ env }));
      expect(outcome).to.have.property('status', 'failed');
      expect(calls).to.deep.equal([]);
    });
  });

  describe('a real `fleet --help`', () => {
    const supported =
      typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'fleet-compile-cache-'));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));
    const run = (extra: Record<string, string> = {}) => {
      const env: NodeJS.ProcessEnv = { ...process.env, FLEET_CACHE_DIR: root, ...extra };
      if (!('NODE_COMPILE_CACHE' in extra)) delete env.NODE_COMPILE_CACHE;
      if (!('NODE_DISABLE_COMPILE_CACHE' in extra)) delete env.NODE_DISABLE_COMPILE_CACHE;
      const result = spawnSync(process.execPath, [BIN, '--help'], { env, encoding: 'utf8' });
      expect(result.status, result.stderr).to.equal(0);
      expect(result.stderr).to.equal('');
    };
    const cachedFiles = (dir: string): string[] =>
      existsSync(dir)
        ? readdirSync(dir, { recursive: true, withFileTypes: true })
            .filter((entry) => entry.isFile())
            .map((entry) => entry.name)
        : [];

    it(
      supported
        ? `fills fleet's cache directory with Node ${process.versions.node}'s module cache, once`
        : `writes nothing: Node ${process.versions.node} has no module cache`,
      () => {
        run();
        const files = cachedFiles(join(root, COMPILE_CACHE_FOLDER));
        if (!supported) {
          expect(existsSync(join(root, COMPILE_CACHE_FOLDER))).to.equal(false);
          return;
        }
        expect(files.length).to.be.greaterThan(1);
        // The next call reads it, and has nothing to add.
        run();
        expect(cachedFiles(join(root, COMPILE_CACHE_FOLDER)).sort()).to.deep.equal(files.sort());
      },
    );

    if (process.platform !== 'win32') {
      it('writes no compiled code into a directory others may write to', () => {
        mkdirSync(join(root, COMPILE_CACHE_FOLDER), { mode: 0o700 });
        chmodSync(join(root, COMPILE_CACHE_FOLDER), 0o777);
        run();
        expect(cachedFiles(join(root, COMPILE_CACHE_FOLDER))).to.deep.equal([]);
      });
    }

    it('writes none with NODE_DISABLE_COMPILE_CACHE=1', () => {
      run({ NODE_DISABLE_COMPILE_CACHE: '1' });
      expect(existsSync(join(root, COMPILE_CACHE_FOLDER))).to.equal(false);
    });
  });
});
