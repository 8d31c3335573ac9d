/**
 * Running a CommonJS bundle with V8's code cache (src/command/code-cached.ts): the bundle behaves
 * as under `require` (its exports, its `require`, `require.cache`), `__fleetImport` stands in for
 * `import()`, and the cache is written once, read back, refused when it cannot be trusted and
 * replaced when V8 rejects it or the text changed.
 */
import { expect } from 'chai';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheFileName, loadCodeCached, type DynamicImport } from '../src/command/code-cached.js';

const BUNDLE = `
const sibling = require('./sibling.cjs');
exports.answer = sibling.value * 2;
exports.file = __filename;
exports.dir = __dirname;
exports.load = (specifier) => __fleetImport(specifier);
function unused() { return 'compiled lazily'; }
exports.later = () => unused();
`;

describe('loadCodeCached: a CommonJS bundle run with V8’s code cache', () => {
  let root: string;
  let bundle: string;
  let cacheDirectory: string;
  let pendingWrites: (() => void)[];
  const onExit = (write: () => void) => pendingWrites.push(write);
  const importer: DynamicImport = (specifier) => import(specifier);
  const load = () => loadCodeCached(bundle, importer, { cacheDirectory, onExit });
  const loadWithoutCache = () => loadCodeCached(bundle, importer, { onExit });
  const exit = () => {
    for (const write of pendingWrites.splice(0)) write();
  };
  const cacheFiles = () => readdirSync(cacheDirectory).sort();
  const requireCache = createRequire(import.meta.url).cache;
  /** The next load as a new process's: the bundle no longer in require.cache. */
  const forgetBundle = () => {
    delete requireCache[bundle];
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'fleet-code-cached-'));
    bundle = join(root, 'bundle.cjs');
    writeFileSync(bundle, BUNDLE);
    writeFileSync(join(root, 'sibling.cjs'), 'exports.value = 21;');
    cacheDirectory = join(root, 'cache');
    mkdirSync(cacheDirectory, { mode: 0o700 });
    pendingWrites = [];
  });
  afterEach(() => {
    forgetBundle();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs the bundle as require would: exports, its own require, __filename, require.cache', () => {
    const loaded = loadWithoutCache();
    expect(loaded.cache).to.equal('none');
    expect(loaded.exports).to.deep.include({ answer: 42, file: bundle, dir: root });
    expect(requireCache[bundle]?.exports).to.equal(loaded.exports);
    expect(pendingWrites).to.have.length(0);
  });

  it('reads an ASCII bundle and a UTF-8 one alike, and names the cache by the text either way', () => {
    const text = "exports.greeting = 'Grüße — 你好'; exports.pattern = /[¹²³]/.test('²');";
    writeFileSync(bundle, text);
    const loaded = loadCodeCached(bundle, importer, { cacheDirectory, onExit });
    expect(loaded.exports).to.deep.equal({ greeting: 'Grüße — 你好', pattern: true });
    expect(loaded.cacheFile).to.equal(join(cacheDirectory, cacheFileName(bundle, text)));
    expect(cacheFileName(bundle, Buffer.from(text))).to.equal(cacheFileName(bundle, text));
  });

  it('hands __fleetImport’s calls to the importer (import() needs a flag inside a vm.Script)', async () => {
    const { exports } = loadWithoutCache() as { exports: { load: DynamicImport } };
    const path = (await exports.load('node:path')) as { join: unknown };
    expect(path.join).to.be.a('function');
  });

  it('writes the cache at exit (0600, named by text and Node.js), then reads it back', () => {
    const first = load();
    expect(first.cache).to.equal('miss');
    expect(cacheFiles()).to.deep.equal([]);
    (first.exports as { later: () => string }).later();
    exit();
    const name = cacheFileName(bundle, BUNDLE);
    expect(cacheFiles()).to.deep.equal([name]);
    if (process.platform !== 'win32') {
      expect(statSync(join(cacheDirectory, name)).mode & 0o777).to.equal(0o600);
    }
    forgetBundle();
    const second = load();
    expect(second).to.deep.include({ cache: 'hit', cacheFile: join(cacheDirectory, name) });
    expect((second.exports as { answer: number }).answer).to.equal(42);
    expect(pendingWrites, 'nothing to write after a hit').to.have.length(0);
  });

  it('replaces data V8 rejects, and still runs the bundle', () => {
    const name = cacheFileName(bundle, BUNDLE);
    writeFileSync(join(cacheDirectory, name), Buffer.alloc(4096, 7), { mode: 0o600 });
    const loaded = load();
    expect(loaded.cache).to.equal('rejected');
    expect((loaded.exports as { answer: number }).answer).to.equal(42);
    exit();
    forgetBundle();
    expect(load().cache).to.equal('hit');
  });

  it('keeps one cache per bundle: a changed text gets its own, and the old one goes', () => {
    load();
    exit();
    const old = cacheFileName(bundle, BUNDLE);
    const changed = `${BUNDLE}\nexports.extra = true;\n`;
    writeFileSync(bundle, changed);
    forgetBundle();
    expect(load().cache).to.equal('miss');
    exit();
    expect(cacheFiles()).to.deep.equal([cacheFileName(bundle, changed)]);
    expect(cacheFileName(bundle, changed)).not.to.equal(old);
  });

  it('leaves the cache of another Node.js line alone', () => {
    const otherLine = `bundle.cjs-v99.0.0-${process.arch}-0123456789abcdef01234567.v8cache`;
    writeFileSync(join(cacheDirectory, otherLine), 'data of another Node.js', { mode: 0o600 });
    load();
    exit();
    expect(cacheFiles()).to.deep.equal([cacheFileName(bundle, BUNDLE), otherLine].sort());
  });

  if (process.platform !== 'win32') {
    it('never follows a symbolic link in place of the cache file', () => {
      load();
      exit();
      const name = cacheFileName(bundle, BUNDLE);
      const elsewhere = join(root, 'elsewhere.v8cache');
      writeFileSync(elsewhere, '');
      rmSync(join(cacheDirectory, name));
      symlinkSync(elsewhere, join(cacheDirectory, name));
      forgetBundle();
      expect(load().cache).to.equal('miss');
      exit();
      expect(statSync(join(cacheDirectory, name)).size).to.be.greaterThan(0);
      expect(statSync(elsewhere).size, 'the link’s target is left alone').to.equal(0);
    });
  }

  it('a bundle that throws is not left in require.cache', () => {
    writeFileSync(bundle, "throw new Error('broken bundle');");
    expect(() => load()).to.throw('broken bundle');
    expect(requireCache[bundle]).to.equal(undefined);
  });

  it('a cache that cannot be written costs nothing but speed', () => {
    rmSync(cacheDirectory, { recursive: true });
    expect(load().cache).to.equal('miss');
    expect(() => exit()).not.to.throw();
    expect(existsSync(cacheDirectory)).to.equal(false);
  });
});
