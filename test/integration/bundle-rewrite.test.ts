/**
 * The bundle step's rewrite of dynamic `import(` calls in core's CommonJS files (scripts/bundle.mjs;
 * docs/adr/0013-core-runs-from-one-code-cached-file.md): a vm.Script on Node.js 20 allows no
 * `import()`, so each call becomes the loader's importer — and only calls: core's own text holds
 * `import(` in strings and template literals (the plugin scaffold's templates), which a pattern
 * once rewrote and broke every scaffolded plugin. A table of cases, then the built files.
 */
import { expect } from 'chai';
import { isAscii } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Bundle from '../../scripts/bundle.mjs';
import { ROOT } from '../src/fleet.js';

const BUNDLE_DIR = join(ROOT, 'packages/core/dist/bundle');

describe('the bundle step: dynamic import() calls, found by a parser', () => {
  let bundle: typeof Bundle;

  before(async () => {
    bundle = (await import(pathToFileURL(join(ROOT, 'scripts/bundle.mjs')).href)) as typeof Bundle;
  });

  const cases: [string, string, string[]][] = [
    ['a call', "import('x');", ["import('x')"]],
    ['an awaited call', 'async function f() { await import("node:net"); }', ['import("node:net")']],
    ['a call inside a template expression', 'const t = `${await import("x")}`;', ['import("x")']],
    ['text in a template literal', "const t = `load: () => import('./a.js')`;", []],
    ['text in a string', "const m = 'import() failed to load';", []],
    ['a comment', "// import('x')\n/* import('y') */", []],
    ['a method named import', "loader.import('x');", []],
    ['a regular expression', 'const r = /import\\(/;', []],
  ];
  for (const [what, text, calls] of cases) {
    it(`${what}: ${calls.length === 0 ? 'left alone' : 'found'}`, async () => {
      const starts = await bundle.dynamicImportStarts(text);
      expect(starts.map((start) => text.slice(start, text.indexOf(')', start) + 1))).to.deep.equal(
        calls,
      );
    });
  }

  it('left no call in core.cjs and oclif.cjs, and the scaffold templates as written', async () => {
    for (const file of ['core.cjs', 'oclif.cjs']) {
      const text = readFileSync(join(BUNDLE_DIR, file), 'utf8');
      expect(await bundle.dynamicImportStarts(text), file).to.deep.equal([]);
    }
    // oclif loads commands and hooks by path: its calls were rewritten to the loader's importer.
    // Core's bundle inlines its own lazy imports and now imports nothing external lazily.
    const oclif = readFileSync(join(BUNDLE_DIR, 'oclif.cjs'), 'utf8');
    expect(oclif).to.contain('__fleetImport(');
    const core = readFileSync(join(BUNDLE_DIR, 'core.cjs'), 'utf8');
    expect(core).to.contain("load: () => import('./installer.js')");
  });

  it('left core.cjs ASCII, which its loader takes as one-byte text without decoding UTF-8', () => {
    expect(isAscii(readFileSync(join(BUNDLE_DIR, 'core.cjs')))).to.equal(true);
  });
});

describe('the bundle step: two edits of oclif start-up (docs/adr/0015-two-edits-of-oclif-start-up.md)', () => {
  let bundle: typeof Bundle;

  before(async () => {
    bundle = (await import(pathToFileURL(join(ROOT, 'scripts/bundle.mjs')).href)) as typeof Bundle;
  });

  it('each edit finds its text exactly once in the installed oclif, and fails loudly otherwise', () => {
    for (const edit of bundle.OCLIF_EDITS) {
      const text = readFileSync(join(ROOT, 'node_modules', edit.file), 'utf8');
      expect(bundle.applyEdit(text, edit), edit.file).to.contain(edit.replace);
      expect(() => bundle.applyEdit(text.replace(edit.find, ''), edit)).to.throw(
        `${edit.file}: the text to edit is not there exactly once`,
      );
      expect(() => bundle.applyEdit(`${text}\n${edit.find}`, edit)).to.throw(edit.file);
    }
  });

  it('oclif.cjs sorts without localeCompare and matches plain plugin names by equality', () => {
    const oclif = readFileSync(join(BUNDLE_DIR, 'oclif.cjs'), 'utf8');
    expect(oclif).not.to.contain('localeCompare');
    expect(oclif).to.contain('a.id<b.id?-1:a.id>b.id?1:0');
    expect(oclif).to.contain('|^!/.test(w)?(0,minimatch_1.minimatch)(p,w):p===w');
  });

  it("the equality rule gives minimatch's answer for every name with none of its special characters", () => {
    // oclif's own copy of minimatch, as its plugin loader requires it.
    const oclifRequire = createRequire(join(ROOT, 'node_modules/@oclif/core/lib/config/'));
    const { minimatch } = oclifRequire('minimatch') as {
      minimatch: (path: string, pattern: string) => boolean;
    };
    const names = ['@oclif/plugin-help', '@fleet/plugin-files', 'a.b', 'x-y_z', '.dot', 'p+q@1'];
    for (const pattern of names) {
      expect(bundle.GLOB_SPECIAL.test(pattern), pattern).to.equal(false);
      for (const dependency of [...names, '@oclif/plugin-helper', 'A.B', '@oclif/plugin-hel']) {
        expect(dependency === pattern, `${dependency} vs ${pattern}`).to.equal(
          minimatch(dependency, pattern),
        );
      }
    }
  });
});
