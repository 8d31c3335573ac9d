/**
 * The reference check (scripts/doc-references.mjs, also run by `npm run lint`): every
 * `contract §N.M`, `catalogue N`, relative Markdown link, `docs/….md` mention and code path named
 * in a Markdown document resolves inside the repository, and nothing names a document outside it. The check is a pure function of the
 * tracked files, so its rules are shown here as a table of cases; the last tests run it over the
 * repository itself, and hold docs/contract.md's error-code table against core's ERROR_CODES.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ERROR_CODES } from '@fleet/core';
import type * as DocReferences from '../../scripts/doc-references.mjs';
import { ROOT } from '../src/fleet.js';

const CONTRACT = [
  '# The contract',
  '## 1. Principles',
  '### 1.5 Secrets never transit',
  '## 5. The controller (node agent)',
  '### 5.1 Node policy',
  '## 8. Config verbs and drift',
  '### 8.1 Drift report',
  '### 8.2 History-aware classification',
  '### 8.3 Plan',
  '## 12. Bootstrap and runtime generations',
  '## 13. The lab',
  '## Errors',
  '## Errors',
  '',
].join('\n');

const RELIABILITY = [
  '# Reliability',
  '## 2. Error vocabulary and invariants',
  '## 3. The cases',
  '### B. File safety',
  '#### 11. Live file is a symlink',
  '### C. Crash and power loss',
  '#### 21. kill -9 between backup and rename',
  '#### 22. kill -9 after the rename',
  '',
].join('\n');

const DOCS = [
  { path: 'docs/contract.md', content: CONTRACT },
  { path: 'docs/reliability.md', content: RELIABILITY },
  { path: 'packages/core/README.md', content: '# core\n' },
];

interface Case {
  readonly name: string;
  /** Files besides the two documents and packages/core/README.md. */
  readonly files: readonly { readonly path: string; readonly content: string }[];
  /** `file:line: message`, each expected line a prefix of the problem it stands for. */
  readonly expected: readonly string[];
  /** Replace the documents (to leave one out). */
  readonly docs?: readonly { readonly path: string; readonly content: string }[];
}

/** The outside names the checker must catch, assembled so that this file names none itself. */
const OUTSIDE = {
  brief: ['SP', 'EC'].join(''),
  sharedNote: ['..', 'shared', 'notes.md'].join('/'),
  catalogue: ['reliability', 'catalogue.md'].join('-'),
};

const CASES: readonly Case[] = [
  {
    name: 'contract sections that exist, alone, in lists and ranges',
    files: [
      {
        path: 'a.ts',
        content:
          '// contract §5.1; contract §8.2, §12; contract §12–§13; contract §8.1–8.3.\n' +
          '// (contract §1.5, §5 and §8) contract §5. And a section: §99 without "contract".\n',
      },
    ],
    expected: [],
  },
  {
    name: 'a section the contract does not have',
    files: [{ path: 'a.ts', content: 'x\n// see contract §9 for it\n' }],
    expected: ['a.ts:2: contract §9: docs/contract.md has no section 9'],
  },
  {
    name: 'each member of a list and each end of a range is checked',
    files: [{ path: 'a.ts', content: '// contract §5, §8.4 and §12; contract §12–§14\n' }],
    expected: [
      'a.ts:1: contract §8.4: docs/contract.md has no section 8.4',
      'a.ts:1: contract §14: docs/contract.md has no section 14',
    ],
  },
  {
    name: 'a reference broken over comment lines',
    files: [
      {
        path: 'a.ts',
        content: '/**\n * The node half (see contract\n * §10.2 and §5,\n * §7): restarts.\n */\n',
      },
    ],
    expected: [
      'a.ts:3: contract §10.2: docs/contract.md has no section 10.2',
      'a.ts:4: contract §7: docs/contract.md has no section 7',
    ],
  },
  {
    name: 'a bare § inside the contract is one of its own sections',
    files: [],
    docs: [
      { path: 'docs/contract.md', content: CONTRACT + 'As §8.2 says; unlike §8.9.\n' },
      { path: 'docs/reliability.md', content: RELIABILITY },
    ],
    expected: ['docs/contract.md:14: contract §8.9: docs/contract.md has no section 8.9'],
  },
  {
    name: 'without docs/contract.md every contract reference is broken',
    files: [{ path: 'a.ts', content: '// contract §5\n' }],
    docs: [{ path: 'docs/reliability.md', content: RELIABILITY }],
    expected: ['a.ts:1: contract §5: docs/contract.md is not tracked'],
  },
  {
    name: 'catalogue cases, groups and sections that exist',
    files: [
      {
        path: 'a.ts',
        content:
          '// catalogue 22; catalogue B11, C21–C22; catalogue 21–22; catalogue B; catalogue §2;\n' +
          '// the catalogue-22 faults; catalogue case 11; catalogue C 21; the catalogue: `ROLLED_BACK`\n' +
          '// and the form itself: cited as `catalogue N`\n',
      },
    ],
    expected: [],
  },
  {
    name: 'catalogue cases, groups and sections that do not',
    files: [
      {
        path: 'a.ts',
        content:
          '// catalogue 23; catalogue C21–C23; catalogue D; catalogue §4\n' +
          '// catalogue C11 (a case in another group); catalogue\n// 99 across lines\n',
      },
    ],
    expected: [
      'a.ts:1: catalogue 23: docs/reliability.md has no case 23',
      'a.ts:1: catalogue C23: docs/reliability.md has no case 23',
      'a.ts:1: catalogue D: docs/reliability.md has no group D',
      'a.ts:1: catalogue §4: docs/reliability.md has no section 4',
      'a.ts:2: catalogue C11: case 11 is in group B (File safety), not C',
      'a.ts:3: catalogue 99: docs/reliability.md has no case 99',
    ],
  },
  {
    name: 'documents outside the repository are never named',
    files: [
      {
        path: 'README.md',
        content:
          // Assembled here, so that this file itself names nothing outside the repository.
          `The ${OUTSIDE.brief} §5 says so.\nSee ${OUTSIDE.sharedNote} and ${OUTSIDE.catalogue}.\n` +
          'A spec file, `"spec": []`, a specification, unshared/ and SPECIAL are fine.\n',
      },
    ],
    expected: [
      'README.md:1: mentions SPEC',
      'README.md:2: mentions a path into shared/',
      `README.md:2: mentions ${OUTSIDE.catalogue}`,
    ],
  },
  {
    name: 'relative Markdown links: tracked files, directories and anchors',
    files: [
      {
        path: 'docs/guide.md',
        content: [
          '# Guide',
          '## Step one',
          '[contract](contract.md#5-the-controller-node-agent) [errors](contract.md#errors-1)',
          '[up](../packages/core/README.md) [dir](../packages/) [here](#step-one) [web](https://x.y/z)',
          '[missing](missing.md) [bad anchor](contract.md#6-interfaces) [self](#step-two)',
          '```md',
          '[in code](nowhere.md)',
          '```',
          'and `[inline](nowhere.md)` code; [out](../../elsewhere.md)',
          '[ref]: ./reliability.md#b-file-safety',
          '',
        ].join('\n'),
      },
    ],
    expected: [
      'docs/guide.md:5: link missing.md: docs/missing.md is not a tracked file',
      'docs/guide.md:5: link contract.md#6-interfaces: docs/contract.md has no heading #6-interfaces',
      'docs/guide.md:5: link #step-two: docs/guide.md has no heading #step-two',
      'docs/guide.md:9: link ../../elsewhere.md: points outside the repository',
    ],
  },
  {
    name: 'docs/….md and README.md mentions',
    files: [
      { path: 'plugins/harness-policy/README.md', content: '# harness-policy\n' },
      {
        path: 'packages/core/src/a.ts',
        content:
          '// see docs/contract.md, docs/contract.md#8-config-verbs-and-drift and README.md\n' +
          '// see docs/nowhere.md, docs/contract.md#9-nothing and plugins/router/README.md\n' +
          "const entry = { path: 'package/README.md' }; // a tarball's, not the repository's\n",
      },
    ],
    expected: [
      'packages/core/src/a.ts:2: docs/nowhere.md: no such tracked file',
      'packages/core/src/a.ts:2: docs/contract.md#9-nothing: docs/contract.md has no heading #9-nothing',
      'packages/core/src/a.ts:2: plugins/router/README.md: no such tracked file',
    ],
  },
  {
    name: 'code paths in Markdown: tracked files and folders, from the document or the root',
    files: [
      { path: 'plugins/router/test/installer.test.ts', content: '' },
      {
        path: 'plugins/router/README.md',
        content: [
          'Tests: `test/installer.test.ts`, `plugins/router/test/`, `packages/core/README.md:3`.',
          'Named in prose, not as code: test/gone.test.ts. A command: `npm test`, `git log -1`.',
          'Made or placeholders: `packages/core/dist/src/index.js`, `plugins/<domain>`, `~/.config/x`.',
          'Not the repository: `src/index.ts` (no src/ here), `.git/fleet-cache`, `@fleet/core/node`.',
          '```sh',
          'cat test/missing.test.ts `test/missing.test.ts`',
          '```',
          '',
        ].join('\n'),
      },
    ],
    expected: [],
  },
  {
    name: 'code paths in Markdown that name nothing tracked',
    files: [
      { path: 'plugins/router/test/installer.test.ts', content: '' },
      {
        path: 'plugins/router/README.md',
        content:
          'Tests: `test/supervisor.test.ts` (deleted), `packages/core/test/`,\n' +
          '`plugins/router/test/installer.test.ts/`, `packages/core/README.md:3`.\n',
      },
    ],
    expected: [
      'plugins/router/README.md:1: test/supervisor.test.ts: no such tracked file or folder',
      'plugins/router/README.md:1: packages/core/test/: no such tracked file or folder',
      'plugins/router/README.md:2: plugins/router/test/installer.test.ts/: no such tracked file or folder',
    ],
  },
  {
    name: 'records of the code as it was are not checked for code paths: ADRs, changesets, dated runs',
    files: [
      { path: 'docs/adr/0001-a-record.md', content: 'Built in `packages/core/src/gone.ts`.\n' },
      { path: '.changeset/a-change.md', content: 'Adds `packages/core/src/gone.ts`.\n' },
      { path: 'bench/RESULTS.md', content: 'Measured `packages/core/src/gone.ts`.\n' },
    ],
    expected: [],
  },
  {
    name: "the checker's own files are not checked",
    files: [
      { path: 'scripts/doc-references.mjs', content: '// SPEC, contract §99, catalogue 99\n' },
      { path: 'scripts/doc-code-paths.mjs', content: '// contract §99\n' },
      { path: 'test/integration/doc-references.test.ts', content: '// contract §99\n' },
    ],
    expected: [],
  },
];

async function loadChecker(): Promise<typeof DocReferences> {
  const url = pathToFileURL(join(ROOT, 'scripts', 'doc-references.mjs')).href;
  return (await import(url)) as typeof DocReferences;
}

describe('doc references (scripts/doc-references.mjs)', () => {
  let checker: typeof DocReferences;
  before(async () => {
    checker = await loadChecker();
  });

  describe('checkReferences: a table of cases', () => {
    for (const testCase of CASES) {
      it(testCase.name, () => {
        const problems = checker
          .checkReferences([...(testCase.docs ?? DOCS), ...testCase.files])
          .map((problem) => checker.formatProblem(problem));
        expect(problems).to.have.length(
          testCase.expected.length,
          `problems:\n${problems.join('\n')}`,
        );
        testCase.expected.forEach((expected, index) => {
          expect(problems[index]).to.satisfy(
            (actual: string) => actual.startsWith(expected),
            `expected ${JSON.stringify(problems[index])} to start with ${JSON.stringify(expected)}`,
          );
        });
      });
    }
  });

  it('numbers the catalogue: sections, groups and the group of each case', () => {
    const index = checker.catalogueIndex(RELIABILITY);
    expect([...index.sections]).to.deep.equal(['2', '3']);
    expect([...index.groups]).to.deep.equal([
      ['B', 'File safety'],
      ['C', 'Crash and power loss'],
    ]);
    expect([...index.cases]).to.deep.equal([
      [11, 'B'],
      [21, 'C'],
      [22, 'C'],
    ]);
  });

  it('finds no broken reference in the repository', () => {
    const problems = checker.checkReferences(checker.readTrackedFiles(ROOT));
    // One line per problem, so a failure reads like the lint script's output.
    expect(problems.map((problem) => checker.formatProblem(problem)).join('\n')).to.equal('');
  });
});

describe('docs/contract.md: the error-code table', () => {
  it('lists every code of core ERROR_CODES with its exit code and HTTP status, and no other', () => {
    const contract = readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8');
    const rows = new Map<string, { exit: number; http: number | undefined }>();
    for (const match of contract.matchAll(
      /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*(\d)\s*\|\s*(\d{3}|—)\s*\|/gm,
    )) {
      const [, code, exit, http] = match as unknown as [string, string, string, string];
      rows.set(code, { exit: Number(exit), http: http === '—' ? undefined : Number(http) });
    }
    const expected = new Map(
      Object.entries(ERROR_CODES).map(([code, spec]) => [
        code,
        { exit: spec.exit, http: 'http' in spec ? spec.http : undefined },
      ]),
    );
    const missing = [...expected.keys()].filter((code) => !rows.has(code));
    const extra = [...rows.keys()].filter((code) => !expected.has(code));
    const wrong = [...expected].filter(([code, spec]) => {
      const row = rows.get(code);
      return row !== undefined && (row.exit !== spec.exit || row.http !== spec.http);
    });
    expect({ missing, extra, wrong: wrong.map(([code]) => code) }).to.deep.equal({
      missing: [],
      extra: [],
      wrong: [],
    });
  });
});
