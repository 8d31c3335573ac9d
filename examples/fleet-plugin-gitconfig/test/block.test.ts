import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { GITCONFIG_MARKERS, findBlock, normaliseBody, spliceBlock } from '../src/index.js';

const BEGIN = GITCONFIG_MARKERS.begin;
const END = GITCONFIG_MARKERS.end;
const BODY = '[user]\n\temail = ops@example.org\n';

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('gitconfig plugin: the managed block', () => {
  describe('splicing keeps everything outside the markers byte for byte', () => {
    const cases: { name: string; live: string; expected: string }[] = [
      { name: 'no file yet (empty)', live: '', expected: `${BEGIN}\n${BODY}${END}\n` },
      {
        name: "a user's file: the block is appended after one blank line",
        live: '[core]\n\teditor = vim\n',
        expected: `[core]\n\teditor = vim\n\n${BEGIN}\n${BODY}${END}\n`,
      },
      {
        name: 'a last line without a newline',
        live: '[core]\n\teditor = vim',
        expected: `[core]\n\teditor = vim\n\n${BEGIN}\n${BODY}${END}\n`,
      },
      {
        name: 'a file already ending with a blank line gets no second one',
        live: '[core]\n\teditor = vim\n\n',
        expected: `[core]\n\teditor = vim\n\n${BEGIN}\n${BODY}${END}\n`,
      },
      {
        name: 'CRLF endings and a BOM',
        live: '\ufeff[core]\r\n\teditor = vim\r\n',
        expected: `\ufeff[core]\r\n\teditor = vim\r\n\r\n${BEGIN}\r\n[user]\r\n\temail = ops@example.org\r\n${END}\r\n`,
      },
      {
        name: 'an existing block: only its body changes, text after it stays',
        live: `[a]\n\tx = 1\n${BEGIN}\n[user]\n\temail = old@example.org\n${END}\n[alias]\n\tco = checkout`,
        expected: `[a]\n\tx = 1\n${BEGIN}\n${BODY}${END}\n[alias]\n\tco = checkout`,
      },
    ];
    for (const { name, live, expected } of cases) {
      it(name, () => {
        const once = spliceBlock(live, BODY, GITCONFIG_MARKERS);
        expect(once).to.equal(expected);
        expect(spliceBlock(once, BODY, GITCONFIG_MARKERS)).to.equal(once); // idempotent
        expect(normaliseBody(findBlock(once, GITCONFIG_MARKERS)?.body ?? '')).to.equal(BODY);
      });
    }
  });

  describe('damaged markers are refused, never repaired', () => {
    const cases: { name: string; live: string; code: string }[] = [
      { name: 'a lone begin', live: `${BEGIN}\n[user]\n`, code: 'MARKERS_UNPAIRED' },
      { name: 'a lone end', live: `[user]\n${END}\n`, code: 'MARKERS_UNPAIRED' },
      { name: 'an indented marker', live: `  ${BEGIN}\n${END}\n`, code: 'MARKERS_UNPAIRED' },
      {
        name: 'another spelling',
        live: `# FLEET:GITCONFIG:BEGIN\n${END}\n`,
        code: 'MARKERS_UNPAIRED',
      },
      {
        name: 'two blocks',
        live: `${BEGIN}\n${END}\n${BEGIN}\n${END}\n`,
        code: 'MARKERS_DUPLICATE',
      },
      { name: 'reversed markers', live: `${END}\n${BEGIN}\n`, code: 'MARKERS_REVERSED' },
    ];
    for (const { name, live, code } of cases) {
      it(name, () => {
        expect(codeOf(() => findBlock(live, GITCONFIG_MARKERS))).to.equal(code);
        expect(codeOf(() => spliceBlock(live, BODY, GITCONFIG_MARKERS))).to.equal(code);
      });
    }

    it('refuses a body that contains a marker line', () => {
      expect(codeOf(() => spliceBlock('', `${BODY}${END}\n`, GITCONFIG_MARKERS))).to.equal(
        'MARKER_IN_BODY',
      );
    });

    it('names line numbers, never line content', () => {
      try {
        findBlock(
          '[url "https://s3cr3t@example.org/"]\n# fleet:gitconfig:begin s3cr3t\n',
          GITCONFIG_MARKERS,
          '~/.gitconfig',
        );
        expect.fail('no refusal');
      } catch (error) {
        expect((error as Error).message)
          .to.contain('(line 2)')
          .and.not.contain('s3cr3t');
      }
    });
  });
});
