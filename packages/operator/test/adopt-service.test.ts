/**
 * `fleet config adopt`'s service (operator/config/adopt.ts), the parts it decides without a node:
 * how a failure is logged, and what the command prints for a commit and for a dry run. The whole
 * verb, on a lab, is test/e2e/adopt-canary.test.ts and test/e2e/classify.test.ts.
 */
import { expect } from 'chai';
import {
  adoptedLine,
  adoptFailureOutcome,
  renderAdoptPreview,
  type AdoptResult,
} from '../src/config/adopt.js';

describe('config adopt service: a failure in the operator log', () => {
  const rows: [code: string, exitCode: number, outcome: string][] = [
    ['HOST_UNREACHABLE', 5, 'unreachable'],
    ['SECRET_DETECTED', 7, 'refused'],
    ['PROMOTE_REFUSED', 7, 'refused'],
    ['DIRTY_WORKTREE', 3, 'refused'],
    ['UNAUTHORIZED', 4, 'failed'],
    ['INTERNAL', 1, 'failed'],
  ];
  for (const [code, exitCode, outcome] of rows) {
    it(`${code} (exit ${exitCode}) is logged ${outcome}`, () => {
      expect(adoptFailureOutcome({ code, exitCode })).to.equal(outcome);
    });
  }
});

describe('config adopt service: what a commit says', () => {
  const base: AdoptResult = {
    host: 'node-01',
    path: '~/.claude/CLAUDE.md',
    domain: 'harness-policy',
    mirrorPath: 'mirror/node-01/harness-policy/CLAUDE.md',
    operationId: '01J0000000000000000000000',
    liveSha256: 'a'.repeat(64),
    commit: null,
    substitutions: {},
  };
  const promoted = { canonical: 'domains/harness-policy/CLAUDE.md', acceptedDriftOn: [] };
  const commit = '0123456789abcdef0123456789abcdef01234567';
  const rows: [name: string, result: AdoptResult, line: string][] = [
    [
      'a commit',
      { ...base, commit },
      'Adopted node-01:~/.claude/CLAUDE.md as mirror/node-01/harness-policy/CLAUDE.md (commit 0123456789ab).',
    ],
    [
      'a commit that promoted',
      { ...base, commit, promoted },
      'Adopted node-01:~/.claude/CLAUDE.md as mirror/node-01/harness-policy/CLAUDE.md and domains/harness-policy/CLAUDE.md (commit 0123456789ab).',
    ],
    [
      'nothing to commit',
      base,
      'mirror/node-01/harness-policy/CLAUDE.md already hold exactly this capture: nothing to commit.',
    ],
    [
      'nothing to commit, promoted',
      { ...base, promoted },
      'mirror/node-01/harness-policy/CLAUDE.md and domains/harness-policy/CLAUDE.md already hold exactly this capture: nothing to commit.',
    ],
  ];
  for (const [name, result, line] of rows) {
    it(name, () => {
      expect(adoptedLine(result)).to.equal(line);
    });
  }
});

describe('config adopt service: the dry run, for a person', () => {
  it('shows the message indented, then each file with its diff, escaped', () => {
    const text = renderAdoptPreview(
      {
        message: 'adopt node-01:~/a\n\nFleet-Operation: x\n',
        files: [{ path: 'mirror/node-01/files/a!', diff: '-old!\n+new' }],
      },
      (value) => value.replace(/!/g, '\\!'),
    );
    expect(text.split('\n')).to.deep.equal([
      'Dry run: nothing written. The commit would be:',
      '',
      '    adopt node-01:~/a',
      '    ',
      '    Fleet-Operation: x',
      '',
      '  mirror/node-01/files/a\\!',
      '    -old\\!',
      '    +new',
    ]);
  });
});
