/**
 * What startup recovery says of an interrupted operation (contract §15, catalogue 21–23): each
 * file's side of the write, and whether a coupled action may not have run.
 */
import { expect } from 'chai';
import type { RecoveryFile } from '@fleet/core/node';
import { interruptionDetail } from '../src/recovery.js';

const SHA = 'a'.repeat(64);

describe('interruptionDetail', () => {
  const cases: [name: string, files: RecoveryFile[], needsAction: boolean, detail: string][] = [
    ['no file written', [], false, 'controller restarted: interrupted before any file was written'],
    [
      'each side of the write',
      [
        { path: '~/a', liveSha256: SHA, matches: 'after' },
        { path: '~/b', liveSha256: SHA, matches: 'before' },
        { path: '~/c', liveSha256: SHA, matches: 'neither' },
        { path: '~/d', liveSha256: null, matches: 'unknown' },
      ],
      false,
      'controller restarted: ~/a: new content; ~/b: old content; ~/c: neither; ~/d: unknown',
    ],
    [
      'a coupled action that may not have run',
      [{ path: '~/a', liveSha256: SHA, matches: 'after' }],
      true,
      'controller restarted: ~/a: new content; coupled actions may not have run (needs action)',
    ],
  ];
  for (const [name, files, needsAction, detail] of cases) {
    it(name, () => {
      expect(interruptionDetail(files, needsAction)).to.equal(detail);
    });
  }
});
