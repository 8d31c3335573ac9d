/**
 * `fleet config adopt`'s mode note (contract §10.4, issue 35): said only when the live mode differs
 * from the files entry's, as a table.
 */
import { expect } from 'chai';
import { adoptModeNote } from '../src/config/adopt-mode.js';

describe('config adopt: the mode note, only for a mode that differs', () => {
  const path = '~/.config/fleet-demo/hello.conf';
  const rows: [
    name: string,
    file: { kind: 'whole' | 'block'; mode?: string },
    live: string | undefined,
    note: string | null,
  ][] = [
    ['the live mode is the entry’s: nothing to say', { kind: 'whole', mode: '0644' }, '0644', null],
    [
      'the live mode differs: content only, both modes named',
      { kind: 'whole', mode: '0644' },
      '0600',
      `adopt takes content only: ${path} keeps the mode 0644 its files.yaml entry says, not its live 0600 (a mode-only difference has nothing to adopt: change the entry's mode, or fleet config install sets it back)`,
    ],
    [
      'no mode reported (Windows, a node not asked)',
      { kind: 'whole', mode: '0644' },
      undefined,
      null,
    ],
    ['an entry without a mode', { kind: 'whole' }, '0600', null],
    ['a block file: its mode is never fleet’s', { kind: 'block', mode: '0644' }, '0600', null],
  ];
  for (const [name, file, live, note] of rows) {
    it(name, () => {
      expect(adoptModeNote(path, file, live)).to.equal(note);
    });
  }
});
