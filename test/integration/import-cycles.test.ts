/**
 * The file-circle check (scripts/import-cycles.mjs, run by `npm run lint`): inside a package no
 * source file imports, directly or through others, a file that imports it back — type-only and
 * literal dynamic imports included; and core's folders import each other in one order, with
 * `schemas/` at the bottom importing none. The checks are pure functions of the sources, so their
 * rules are tables of cases; the last tests run them over the repository itself.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Boundaries from '../../scripts/import-boundaries.mjs';
import type * as Cycles from '../../scripts/import-cycles.mjs';
import { ROOT } from '../src/fleet.js';

interface Case {
  readonly name: string;
  readonly files: readonly Boundaries.SourceFile[];
  /** Each circle as `a → b → a`, in order. */
  readonly expected: readonly string[];
}

const file = (path: string, content: string): Boundaries.SourceFile => ({ path, content });

const CASES: readonly Case[] = [
  {
    name: 'a chain of imports with a shared ground is no circle',
    files: [
      file('p/src/a.ts', "import { b } from './b.js';\nimport { g } from './g.js';\n"),
      file('p/src/b.ts', "import { g } from './g.js';\n"),
      file('p/src/g.ts', "import { z } from 'zod';\n"),
    ],
    expected: [],
  },
  {
    name: 'two files importing each other',
    files: [
      file('p/src/a.ts', "import { b } from './b.js';\n"),
      file('p/src/b.ts', "export { a } from './a.js';\n"),
    ],
    expected: ['p/src/a.ts → p/src/b.ts → p/src/a.ts'],
  },
  {
    name: 'a circle through a type-only import counts',
    files: [
      file('p/src/log.ts', "import { Counter } from './reads.js';\n"),
      file('p/src/reads.ts', "import type { Entry } from './log.js';\n"),
    ],
    expected: ['p/src/log.ts → p/src/reads.ts → p/src/log.ts'],
  },
  {
    name: 'a circle through a literal dynamic import counts',
    files: [
      file('p/src/a.ts', "export const f = () => import('./b.js');\n"),
      file('p/src/b.ts', "import type { A } from './a.js';\n"),
    ],
    expected: ['p/src/a.ts → p/src/b.ts → p/src/a.ts'],
  },
  {
    name: 'a circle of three across folders, reported from its first file by its shortest way',
    files: [
      file('p/src/context.ts', "import { s } from './lifecycle/supervisor.js';\n"),
      file('p/src/lifecycle/supervisor.ts', "import { l } from './launch.js';\n"),
      file('p/src/lifecycle/launch.ts', "import { Runner } from '../context.js';\n"),
    ],
    expected: [
      'p/src/context.ts → p/src/lifecycle/supervisor.ts → p/src/lifecycle/launch.ts → p/src/context.ts',
    ],
  },
  {
    name: 'a file importing itself',
    files: [file('p/src/a.ts', "export * from './a.js';\n")],
    expected: ['p/src/a.ts → p/src/a.ts'],
  },
  {
    name: 'two separate circles, each reported once',
    files: [
      file('p/src/a.ts', "import './b.js';\n"),
      file('p/src/b.ts', "import './a.js';\n"),
      file('q/src/c.ts', "import './d.js';\n"),
      file('q/src/d.ts', "import './c.js';\n"),
    ],
    expected: ['p/src/a.ts → p/src/b.ts → p/src/a.ts', 'q/src/c.ts → q/src/d.ts → q/src/c.ts'],
  },
  {
    name: 'package imports, unknown files and declaration files are no edges',
    files: [
      file('p/src/a.ts', "import '@fleet/core';\nimport './missing.js';\nimport './b.js';\n"),
      file('p/src/b.d.ts', "import './a.js';\n"),
    ],
    expected: [],
  },
];

const FOLDER_CASES: readonly Case[] = [
  {
    name: 'folders in layers over schemas/ and a root file are in order',
    files: [
      file('packages/core/src/repo/load.ts', "import { s } from '../cache/store.js';\n"),
      file('packages/core/src/cache/store.ts', "import { p } from '../schemas/pin.js';\n"),
      file('packages/core/src/schemas/pin.ts', "import '../zod-config.js';\n"),
      file('packages/core/src/zod-config.ts', "import { l } from './repo/load.js';\n"),
    ],
    expected: [],
  },
  {
    name: 'two folders importing each other through different files, each edge named',
    files: [
      file('packages/core/src/repo/load.ts', "import { s } from '../cache/store.js';\n"),
      file('packages/core/src/cache/store.ts', ''),
      file('packages/core/src/cache/history.ts', "import type { S } from '../repo/sources.js';\n"),
      file('packages/core/src/repo/sources.ts', ''),
    ],
    expected: [
      'core folder circle: cache → repo → cache (cache/history.ts imports repo/sources.ts; repo/load.ts imports cache/store.ts)',
    ],
  },
  {
    name: 'schemas/ importing a folder',
    files: [
      file('packages/core/src/schemas/pin.ts', "import { a } from '../runtime/plugins.js';\n"),
      file('packages/core/src/runtime/plugins.ts', ''),
    ],
    expected: [
      "core's schemas/ imports the folder runtime/: schemas/pin.ts imports runtime/plugins.ts (schemas/ imports none)",
    ],
  },
  {
    name: "another package's folders are not core's",
    files: [
      file('packages/controller/src/a/x.ts', "import '../b/y.js';\n"),
      file('packages/controller/src/b/y.ts', "import '../a/z.js';\n"),
      file('packages/controller/src/a/z.ts', ''),
    ],
    expected: [],
  },
];

describe('import circles (scripts/import-cycles.mjs)', () => {
  let checker: typeof Cycles;
  let boundaries: typeof Boundaries;
  before(async () => {
    const load = (name: string) => import(pathToFileURL(join(ROOT, 'scripts', name)).href);
    checker = (await load('import-cycles.mjs')) as typeof Cycles;
    boundaries = (await load('import-boundaries.mjs')) as typeof Boundaries;
  });

  describe('findCycles: a table of cases', () => {
    for (const testCase of CASES) {
      it(testCase.name, () => {
        const circles = checker.findCycles(testCase.files).map((circle) => circle.join(' → '));
        expect(circles).to.deep.equal(testCase.expected);
      });
    }
  });

  describe("findFolderProblems: core's folders, a table of cases", () => {
    for (const testCase of FOLDER_CASES) {
      it(testCase.name, () => {
        expect(checker.findFolderProblems(testCase.files)).to.deep.equal(testCase.expected);
      });
    }
  });

  it("the repository's core folders are in order", () => {
    expect(checker.findFolderProblems(boundaries.readSources(ROOT))).to.deep.equal([]);
  });

  it('the repository itself has no circle of files', () => {
    const circles = checker.findCycles(boundaries.readSources(ROOT));
    expect(circles.map((circle) => circle.join(' → '))).to.deep.equal([]);
  });
});
