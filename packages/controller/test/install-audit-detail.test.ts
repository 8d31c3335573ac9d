/**
 * The detail of an install's audit record (contract §8.4, docs/audit-log.md): the receipt's outcome
 * and how many files were written, unchanged or restored, a pending restart's detail, or the
 * redacted error of a refusal; `unattended: ` first when the install ran unattended.
 */
import { expect } from 'chai';
import type { ReceiptFile } from '@fleet/core/node';
import { installAuditDetail } from '../src/handlers/install-answer.js';

type State = ReceiptFile['state'];
const files = (...states: State[]): { state: State }[] => states.map((state) => ({ state }));

describe('installAuditDetail', () => {
  const cases: [name: string, args: Parameters<typeof installAuditDetail>, detail: string][] = [
    [
      'an install',
      [
        false,
        { outcome: 'installed' },
        files('written', 'unchanged', 'written'),
        undefined,
        undefined,
      ],
      'installed: 2 written, 1 unchanged, 0 restored',
    ],
    [
      'a rolled-back install',
      [false, { outcome: 'rolled-back' }, files('restored'), undefined, { message: 'no' }],
      'rolled-back: 0 written, 0 unchanged, 1 restored',
    ],
    [
      'a pending restart, unattended',
      [true, { outcome: 'installed' }, files('written'), { detail: 'restart pending' }, undefined],
      'unattended: installed: 1 written, 0 unchanged, 0 restored; restart pending',
    ],
    [
      'a refusal before any write',
      [false, undefined, [], undefined, { message: 'the live file changed' }],
      'the live file changed',
    ],
    [
      'a refusal without a message, unattended',
      [true, undefined, [], undefined, undefined],
      'unattended: ',
    ],
  ];
  for (const [name, args, detail] of cases) {
    it(name, () => {
      expect(installAuditDetail(...args)).to.equal(detail);
    });
  }
});
