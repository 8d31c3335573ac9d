/**
 * The bundle step's rewrite of dynamic `import(` calls in core's CommonJS files (scripts/bundle.mjs;
 * docs/adr/0013-core-runs-from-one-code-cached-file.md): a vm.Script on Node.js 20 allows no
 * `import()`, so each call becomes the loader's importer — and only calls: core's own text holds
 * `import(` in strings and template literals (the plugin scaffold's templates), which a pattern
 * once rewrote and broke every scaffolded plugin. A table of cases, then the built files.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
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
      expect(text, file).to.contain('__fleetImport(');
    }
    const core = readFileSync(join(BUNDLE_DIR, 'core.cjs'), 'utf8');
    expect(core).to.contain("load: () => import('./installer.js')");
  });
});
