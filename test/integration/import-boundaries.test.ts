/**
 * The import-boundary check (scripts/import-boundaries.mjs, run by `npm run lint`): each layer's
 * sources import only what docs/architecture.md allows it — core nothing above it, a plugin no
 * other plugin, the CLI no plugin except through the registry, the testkit no operator — and no
 * package reaches into another's files. The check is a pure function of the sources, so its rules
 * are a table of cases; the last test runs it over the repository itself.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Boundaries from '../../scripts/import-boundaries.mjs';
import { ROOT } from '../src/fleet.js';

interface Case {
  readonly name: string;
  readonly files: readonly Boundaries.SourceFile[];
  readonly exceptions?: readonly Boundaries.BoundaryException[];
  /** Each a substring of one problem, in order. */
  readonly expected: readonly string[];
}

const CASES: readonly Case[] = [
  {
    name: 'core, a plugin and the CLI importing what their layer allows',
    files: [
      {
        path: 'packages/core/src/a.ts',
        content: "import { x } from './b.js';\nimport z from 'zod';\n",
      },
      {
        path: 'plugins/router/src/a.ts',
        content:
          "import { FleetError } from '@fleet/core';\nimport { FleetBaseCommand } from '@fleet/core/command';\n",
      },
      {
        path: 'packages/cli/src/a.ts',
        content:
          "import { Registry } from '@fleet/core';\nimport type { Controller } from '@fleet/controller';\n",
      },
      { path: 'packages/testkit/src/a.ts', content: "import { FleetError } from '@fleet/core';\n" },
    ],
    expected: [],
  },
  {
    name: "the controller and a plugin's node half importing core's node-side entry",
    files: [
      {
        path: 'packages/controller/src/a.ts',
        content: "import { FleetError } from '@fleet/core/node';\n",
      },
      {
        path: 'plugins/router/src/installer.ts',
        content: "import { fileInstaller } from '@fleet/core/node';\n",
      },
    ],
    expected: [],
  },
  {
    name: "zod and oclif through the copies inside core's bundle; oclif types from @oclif/core",
    files: [
      {
        path: 'packages/controller/src/a.ts',
        content:
          "import * as z from '@fleet/core/zod';\nimport type * as Z from '@fleet/core/zod';\n",
      },
      {
        path: 'packages/cli/src/a.ts',
        content:
          "import { Flags, execute } from '@fleet/core/command';\nimport type { Interfaces } from '@oclif/core';\nexport type { Hook } from '@oclif/core';\n",
      },
    ],
    expected: [],
  },
  {
    name: 'zod or oclif values imported from their own packages outside core',
    files: [
      {
        path: 'plugins/files/src/a.ts',
        content: "import * as z from 'zod';\nconst { z: lazy } = await import('zod');\n",
      },
      {
        path: 'packages/cli/src/a.ts',
        content: "import { Flags } from '@oclif/core';\nimport type * as Z from 'zod';\n",
      },
    ],
    expected: [
      "plugins/files/src/a.ts:1: zod: import it through @fleet/core/zod, the copy inside core's bundle",
      'plugins/files/src/a.ts:2: zod: import it through @fleet/core/zod',
      'packages/cli/src/a.ts:1: @oclif/core: import it through @fleet/core/command',
      'packages/cli/src/a.ts:2: zod: import it through @fleet/core/zod',
    ],
  },
  {
    name: 'core importing the controller, the CLI or a plugin',
    files: [
      {
        path: 'packages/core/src/a.ts',
        content:
          "import { x } from '@fleet/controller';\nexport { y } from '@fleet/cli';\nimport type { Z } from '@fleet/plugin-router';\n",
      },
    ],
    expected: [
      'packages/core/src/a.ts:1: @fleet/controller: core imports controller',
      'packages/core/src/a.ts:2: @fleet/cli: core imports cli',
      'packages/core/src/a.ts:3: @fleet/plugin-router: core imports plugin router',
    ],
  },
  {
    name: 'a plugin importing another plugin, statically or lazily',
    files: [
      {
        path: 'plugins/router/src/a.ts',
        content:
          "const m = await import('@fleet/plugin-harness-policy');\nimport { q } from 'fleet-plugin-gitconfig';\n",
      },
    ],
    expected: [
      'plugins/router/src/a.ts:1: @fleet/plugin-harness-policy: plugin router imports plugin harness-policy: plugins reach each other only through the registry',
      'plugins/router/src/a.ts:2: fleet-plugin-gitconfig: plugin router imports plugin fleet-plugin-gitconfig',
    ],
  },
  {
    name: 'the CLI importing a plugin (outside the registry)',
    files: [
      {
        path: 'packages/cli/src/commands/a.ts',
        content: "import { quoteWord } from '@fleet/plugin-bootstrap-systemd';\n",
      },
    ],
    expected: [
      'packages/cli/src/commands/a.ts:1: @fleet/plugin-bootstrap-systemd: cli imports plugin bootstrap-systemd: plugins are reached only through the registry',
    ],
  },
  {
    name: 'the operator services importing the CLI, the lab or a plugin',
    files: [
      {
        path: 'packages/operator/src/config/a.ts',
        content:
          "import { x } from '@fleet/cli/package.json';\nimport { l } from '@fleet/lab';\nimport { r } from '@fleet/plugin-router';\n",
      },
    ],
    expected: [
      'packages/operator/src/config/a.ts:1: @fleet/cli/package.json: operator imports cli: operator may import only core, controller',
      'packages/operator/src/config/a.ts:2: @fleet/lab: operator imports lab: operator may import only core, controller',
      'packages/operator/src/config/a.ts:3: @fleet/plugin-router: operator imports plugin router: plugins are reached only through the registry',
    ],
  },
  {
    name: "the CLI importing an operator module by its path, or its dist: only the services' entries",
    files: [
      {
        path: 'packages/cli/src/commands/a.ts',
        content:
          "import { installDomain } from '@fleet/operator/config/install-domain.js';\nimport { y } from '@fleet/operator/dist/src/config/install.js';\n",
      },
    ],
    expected: [
      'packages/cli/src/commands/a.ts:1: @fleet/operator/config/install-domain.js: a deep import into @fleet/operator: use what its exports offer',
      'packages/cli/src/commands/a.ts:2: @fleet/operator/dist/src/config/install.js: a deep import into @fleet/operator: use what its exports offer',
    ],
  },
  {
    name: "the CLI importing an operator service by its entry's name; a name no package declares",
    files: [
      {
        path: 'packages/cli/src/commands/drift.ts',
        content:
          "import { DriftService } from '@fleet/operator/drift';\nimport { container } from '@fleet/core/di';\nimport { x } from '@fleet/operator/drfit';\nimport { y } from '@fleet/core/drift';\n",
      },
    ],
    expected: [
      'packages/cli/src/commands/drift.ts:3: @fleet/operator/drfit: a deep import into @fleet/operator: use what its exports offer',
      'packages/cli/src/commands/drift.ts:4: @fleet/core/drift: a deep import into @fleet/core: use what its exports offer',
    ],
  },
  {
    name: 'the resident importing the CLI or the operator services; the CLI importing it by module',
    files: [
      {
        path: 'packages/resident/src/a.ts',
        content:
          "import { x } from '@fleet/cli/package.json';\nimport { o } from '@fleet/operator/drift';\nimport * as z from '@fleet/core/zod';\n",
      },
      {
        path: 'packages/cli/src/resident.ts',
        content:
          "import { cliRootAt } from '@fleet/resident/place.js';\nimport { y } from '@fleet/resident/dist/src/place.js';\n",
      },
    ],
    expected: [
      'packages/resident/src/a.ts:1: @fleet/cli/package.json: resident imports cli: resident may import only core',
      'packages/resident/src/a.ts:2: @fleet/operator/drift: resident imports operator: resident may import only core',
      'packages/cli/src/resident.ts:2: @fleet/resident/dist/src/place.js: a deep import into @fleet/resident: use what its exports offer',
    ],
  },
  {
    name: 'the testkit importing the controller (its writer) but not the operator',
    files: [
      {
        path: 'packages/testkit/src/a.ts',
        content:
          "import { createHomeWriter } from '@fleet/controller';\nimport { x } from '@fleet/operator/drift';\n",
      },
    ],
    expected: [
      'packages/testkit/src/a.ts:2: @fleet/operator/drift: testkit imports operator: testkit may import only core, controller',
    ],
  },
  {
    name: "a deep import into another package's files, or a relative import out of the package",
    files: [
      {
        path: 'packages/cli/src/a.ts',
        content:
          "import { x } from '@fleet/core/dist/src/errors.js';\nimport { y } from '../../../plugins/router/src/installer.js';\nimport pkg from '@fleet/core/package.json';\n",
      },
    ],
    expected: [
      'packages/cli/src/a.ts:1: @fleet/core/dist/src/errors.js: a deep import into @fleet/core',
      'packages/cli/src/a.ts:2: ../../../plugins/router/src/installer.js: a relative import out of packages/cli',
    ],
  },
  {
    name: 'an import() of anything but a string literal in src, which neither tsc nor the check sees',
    files: [
      {
        path: 'packages/testkit/src/a.ts',
        content:
          "const name = '@fleet/controller';\nconst m = await import(name);\n" +
          'const n = await import(`@fleet/${name}`);\n',
      },
      {
        path: 'packages/core/src/b.ts',
        content:
          "// import(name) in a comment, and 'import(name)' in a string, are no calls\n" +
          "const a = await import('./c.js');\nconst b = await import(`./d.js`);\n",
      },
      { path: 'packages/core/test/c.test.ts', content: 'await import(name);\n' },
    ],
    expected: [
      'packages/testkit/src/a.ts:2: import(name): an import() of anything but a string literal',
      'packages/testkit/src/a.ts:3: import(`@fleet/${name}`): an import() of anything but a string literal',
    ],
  },
  {
    name: 'a non-literal import() recorded as an exception, by its argument',
    files: [
      { path: 'packages/controller/src/a.ts', content: 'await import(pluginUrl);\n' },
      { path: 'packages/controller/src/b.ts', content: "await import('./c.js');\n" },
    ],
    exceptions: [
      { file: 'packages/controller/src/a.ts', target: 'pluginUrl', reason: 'test' },
      { file: 'packages/controller/src/b.ts', target: 'other', reason: 'test' },
    ],
    expected: ['packages/controller/src/b.ts:1: recorded exception for other no longer needed'],
  },
  {
    name: 'tests and files outside the checked sources are not checked',
    files: [
      { path: 'plugins/router/test/a.test.ts', content: "import { x } from '@fleet/testkit';\n" },
      { path: 'test/e2e/a.test.ts', content: "import { x } from '@fleet/plugin-router';\n" },
    ],
    expected: [],
  },
  {
    name: 'a recorded exception is honoured, and reported once it is no longer needed',
    files: [
      { path: 'packages/cli/src/a.ts', content: "import { p } from '@fleet/plugin-router';\n" },
      { path: 'packages/cli/src/b.ts', content: "import { p } from '@fleet/core';\n" },
    ],
    exceptions: [
      { file: 'packages/cli/src/a.ts', target: '@fleet/plugin-router', reason: 'test' },
      { file: 'packages/cli/src/b.ts', target: '@fleet/plugin-router', reason: 'test' },
    ],
    expected: [
      'packages/cli/src/b.ts:1: recorded exception for @fleet/plugin-router no longer needed',
    ],
  },
];

describe('import boundaries (scripts/import-boundaries.mjs)', () => {
  let checker: typeof Boundaries;
  before(async () => {
    const url = pathToFileURL(join(ROOT, 'scripts', 'import-boundaries.mjs')).href;
    checker = (await import(url)) as typeof Boundaries;
  });

  describe('checkBoundaries: a table of cases', () => {
    for (const testCase of CASES) {
      it(testCase.name, () => {
        const problems = checker
          .checkBoundaries(testCase.files, testCase.exceptions ?? [])
          .map((problem) => checker.formatProblem(problem));
        expect(problems).to.have.length(
          testCase.expected.length,
          `problems:\n${problems.join('\n')}`,
        );
        testCase.expected.forEach((expected, index) => {
          expect(problems[index]).to.contain(expected);
        });
      });
    }
  });

  it("names every package's declared entries, as its package.json `exports` lists them", () => {
    const declared: Record<string, string[]> = {};
    for (const dir of readdirSync(join(ROOT, 'packages'))) {
      const manifest = JSON.parse(
        readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'),
      ) as { name: string; exports?: Record<string, unknown> };
      // Named entries only: `.`, package.json and a module package's `./*.js`-style paths aside.
      const entries = Object.keys(manifest.exports ?? {})
        .filter((key) => key !== '.' && key !== './package.json' && !key.endsWith('.js'))
        .map((key) => key.slice(1))
        .sort();
      if (entries.length > 0) declared[manifest.name] = entries;
    }
    expect(checker.PUBLIC_ENTRIES).to.deep.equal(declared);
  });

  it('the repository itself keeps its boundaries', () => {
    const problems = checker.checkBoundaries(checker.readSources(ROOT));
    expect(problems.map((problem) => checker.formatProblem(problem))).to.deep.equal([]);
  });
});
