/**
 * The managed-block editor, byte for byte (contract §6 `kind: block`, §10.3, §10.4; reliability
 * catalogue H 55). Every fixture is a row of a table: copy a row to add a case. The first half
 * uses HTML comment markers (harness-policy's), the last the `#` markers of a config file (the
 * gitconfig example's): the rules are the same whatever the comment syntax.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import * as editor from '../src/installers/block.js';
import { isFleetError, type BlockMarkers, type ErrorCode } from '../src/index.js';

const POLICY_MARKERS: BlockMarkers = {
  begin: '<!-- fleet:harness-policy:begin -->',
  end: '<!-- fleet:harness-policy:end -->',
};
const GITCONFIG_MARKERS: BlockMarkers = {
  begin: '# fleet:gitconfig:begin',
  end: '# fleet:gitconfig:end',
};

// The HTML-comment cases below call the editor with these markers unless they name others.
const findBlock = (text: string, markers = POLICY_MARKERS, source?: string) =>
  editor.findBlock(text, markers, source);
const spliceBlock = (live: string, body: string, markers = POLICY_MARKERS, source?: string) =>
  editor.spliceBlock(live, body, markers, source);
const assertNoMarkers = (body: string, markers = POLICY_MARKERS) =>
  editor.assertNoMarkers(body, markers);
const { normaliseBody } = editor;

const B = POLICY_MARKERS.begin;
const E = POLICY_MARKERS.end;
const BOM = '\ufeff';

const sha256 = (text: string): string =>
  createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

/** The error code a call fails with, or `undefined` when it does not throw. */
function codeOf(call: () => unknown): ErrorCode | undefined {
  try {
    call();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return undefined;
}

/** The bytes outside the block's body: before it (BEGIN line included) and after it (END too). */
function outside(text: string): { before: string; after: string } {
  const block = findBlock(text);
  if (block === null) throw new Error('no block');
  return { before: block.prefix + block.begin, after: block.end + block.suffix };
}

describe('managed block (HTML comment markers): marker damage is refused (catalogue 55)', () => {
  const damaged: { name: string; text: string; code: ErrorCode }[] = [
    { name: 'END missing', text: `intro\n${B}\npolicy\n`, code: 'MARKERS_UNPAIRED' },
    { name: 'BEGIN missing', text: `intro\npolicy\n${E}\nafter\n`, code: 'MARKERS_UNPAIRED' },
    { name: 'a lone BEGIN at the end', text: `intro\n${B}`, code: 'MARKERS_UNPAIRED' },
    {
      name: 'two BEGINs and one END',
      text: `${B}\n${B}\npolicy\n${E}\n`,
      code: 'MARKERS_DUPLICATE',
    },
    {
      name: 'one BEGIN and two ENDs',
      text: `${B}\npolicy\n${E}\n${E}\n`,
      code: 'MARKERS_DUPLICATE',
    },
    { name: 'nested blocks', text: `${B}\n${B}\nx\n${E}\n${E}\n`, code: 'MARKERS_DUPLICATE' },
    { name: 'two blocks', text: `${B}\na\n${E}\nmid\n${B}\nb\n${E}\n`, code: 'MARKERS_DUPLICATE' },
    {
      name: 'END before BEGIN',
      text: `top\n${E}\nkeep me\n${B}\nbottom\n`,
      code: 'MARKERS_REVERSED',
    },
    { name: 'BEGIN with trailing space', text: `${B} \npolicy\n${E}\n`, code: 'MARKERS_UNPAIRED' },
    { name: 'END with trailing tab', text: `${B}\npolicy\n${E}\t\n`, code: 'MARKERS_UNPAIRED' },
    { name: 'BEGIN indented', text: `  ${B}\npolicy\n${E}\n`, code: 'MARKERS_UNPAIRED' },
    {
      name: 'END with other text on its line',
      text: `${B}\npolicy ${E}\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'a marker in another case',
      text: `${B.toUpperCase()}\npolicy\n${E}\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'a lone damaged marker (never read as "no block")',
      text: `intro\n ${B}\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'CRLF on marker lines only',
      text: `a\n${B}\r\npolicy\n${E}\r\nb\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'CRLF on the END line only',
      text: `a\n${B}\npolicy\n${E}\r\nb\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'LF marker lines in a CRLF file',
      text: `a\r\n${B}\npolicy\r\n${E}\nb\r\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'a stray CR before the line ending',
      text: `${B}\r\r\npolicy\r\n${E}\r\n`,
      code: 'MARKERS_UNPAIRED',
    },
    {
      name: 'markers of a block-only file disagree',
      text: `${B}\r\n${E}\n`,
      code: 'MARKERS_UNPAIRED',
    },
  ];

  for (const { name, text, code } of damaged) {
    it(`${name}: findBlock and spliceBlock refuse with ${code}`, () => {
      expect(codeOf(() => findBlock(text))).to.equal(code);
      // Never "append a fresh block" and never delete a span: the splice refuses as well.
      expect(codeOf(() => spliceBlock(text, 'new policy\n'))).to.equal(code);
    });
  }

  it('names line numbers, never line content (the live file may hold secrets)', () => {
    const text = `token=s3cr3t\n${B} s3cr3t\npolicy\n${E}\n`;
    try {
      findBlock(text, POLICY_MARKERS, '~/.codex/AGENTS.md');
      expect.fail('should refuse');
    } catch (error) {
      if (!isFleetError(error)) throw error;
      expect(error.message).to.contain('~/.codex/AGENTS.md').and.contain('line 2');
      expect(error.message).not.to.contain('s3cr3t');
      expect(error.problems).to.deep.include({
        file: '~/.codex/AGENTS.md',
        line: 2,
        message: 'a damaged marker (other text on its line, or a different spelling)',
      });
    }
  });

  const bodies: { name: string; body: string }[] = [
    { name: 'a BEGIN line', body: `rule\n${B}\nrule\n` },
    { name: 'an END line', body: `rule\n${E}\n` },
    { name: 'a marker quoted in prose', body: `Do not edit \`${E}\` by hand.\n` },
  ];
  for (const { name, body } of bodies) {
    it(`refuses a new body containing ${name} (MARKER_IN_BODY), with or without a block`, () => {
      expect(codeOf(() => assertNoMarkers(body))).to.equal('MARKER_IN_BODY');
      expect(codeOf(() => spliceBlock('', body))).to.equal('MARKER_IN_BODY');
      expect(codeOf(() => spliceBlock(`${B}\nold\n${E}\n`, body))).to.equal('MARKER_IN_BODY');
    });
  }
});

describe('managed block (HTML comment markers): findBlock', () => {
  it('returns null for a file without markers (and for an empty file)', () => {
    expect(findBlock('# notes\nno block here\n')).to.equal(null);
    expect(findBlock('')).to.equal(null);
    expect(findBlock(BOM)).to.equal(null);
  });

  it('splits a file into exact pieces that concatenate back to it', () => {
    const text = `${BOM}intro\r\n${B}\r\nrule 1\r\nrule 2\r\n${E}\r\ntail`;
    const block = findBlock(text);
    expect(block).to.deep.equal({
      prefix: `${BOM}intro\r\n`,
      begin: `${B}\r\n`,
      body: 'rule 1\r\nrule 2\r\n',
      end: `${E}\r\n`,
      suffix: 'tail',
      eol: '\r\n',
    });
    const { prefix, begin, body, end, suffix } = block!;
    expect(prefix + begin + body + end + suffix).to.equal(text);
  });

  it('finds markers right after a BOM, and an END that ends the file without a newline', () => {
    const block = findBlock(`${BOM}${B}\nrule\n${E}`);
    expect(block?.prefix).to.equal(BOM);
    expect(block?.body).to.equal('rule\n');
    expect(block?.end).to.equal(E);
    expect(block?.suffix).to.equal('');
  });

  it('treats a lone CR as line content, not as a line ending', () => {
    expect(findBlock(`a\rb\n${B}\nx\n${E}\n`)?.prefix).to.equal('a\rb\n');
  });

  // Lower-casing `İ` makes two characters and `Σ` depends on its neighbours: with either in the
  // file, damaged markers are looked for line by line, not in the lower-cased text as a whole.
  // Each case is checked both ways, in an ASCII text and after such a line.
  const unicodeLines = [
    ['plain ASCII', 'notes'],
    ['a character lower-cased into two (İ)', 'İstanbul notes'],
    ['a character lower-cased by its neighbours (Σ)', 'ΟΔΟΣ notes'],
  ] as const;
  for (const [name, first] of unicodeLines) {
    it(`after ${name}: finds the block and refuses a damaged marker on any line`, () => {
      expect(findBlock(`${first}\n${B}\nrule\n${E}\ntail\n`)?.body).to.equal('rule\n');
      expect(codeOf(() => findBlock(`${first}\n${B}\nrule\n${E.toUpperCase()}\n`))).to.equal(
        'MARKERS_UNPAIRED',
      );
      expect(codeOf(() => findBlock(`${first}\n${B}\nrule ${E}\n${E}\n`))).to.equal(
        'MARKERS_UNPAIRED',
      );
      expect(codeOf(() => findBlock(`${first}\n${B}\nrule\n${E}\n${E}\n`))).to.equal(
        'MARKERS_DUPLICATE',
      );
      expect(findBlock(`${first}\nno markers\n`)).to.equal(null);
    });
  }
});

describe('managed block (HTML comment markers): normaliseBody', () => {
  it('LF endings and a final newline, nothing else touched', () => {
    expect(normaliseBody('a\r\nb')).to.equal('a\nb\n');
    expect(normaliseBody('a\rb\n')).to.equal('a\rb\n');
    expect(normaliseBody('')).to.equal('');
  });
});

describe('managed block (HTML comment markers): spliceBlock is byte-exact', () => {
  const body = '## Policy\n- one\n- two\n';
  const table: { name: string; live: string; expected: string }[] = [
    { name: 'an empty file becomes just the block', live: '', expected: `${B}\n${body}${E}\n` },
    {
      name: 'a BOM-only file keeps its BOM before the block',
      live: BOM,
      expected: `${BOM}${B}\n${body}${E}\n`,
    },
    {
      name: 'a missing block is appended after one blank line (LF file)',
      live: '# Mine\ntext\n',
      expected: `# Mine\ntext\n\n${B}\n${body}${E}\n`,
    },
    {
      name: "no final newline: the file's EOL first, then one blank line",
      live: '# Mine\ntext',
      expected: `# Mine\ntext\n\n${B}\n${body}${E}\n`,
    },
    {
      name: 'a file already ending with a blank line gets no second one',
      live: '# Mine\n\n',
      expected: `# Mine\n\n${B}\n${body}${E}\n`,
    },
    {
      name: 'a CRLF file gets a CRLF block',
      live: '# Mine\r\ntext\r\n',
      expected: `# Mine\r\ntext\r\n\r\n${B}\r\n## Policy\r\n- one\r\n- two\r\n${E}\r\n`,
    },
    {
      name: 'a CRLF file without final newline',
      live: '# Mine\r\ntext',
      expected: `# Mine\r\ntext\r\n\r\n${B}\r\n## Policy\r\n- one\r\n- two\r\n${E}\r\n`,
    },
    {
      name: 'a BOM + CRLF file keeps both',
      live: `${BOM}# Mine\r\n`,
      expected: `${BOM}# Mine\r\n\r\n${B}\r\n## Policy\r\n- one\r\n- two\r\n${E}\r\n`,
    },
    {
      name: 'a block at the very start',
      live: `${B}\nold\n${E}\nafter\n`,
      expected: `${B}\n${body}${E}\nafter\n`,
    },
    {
      name: 'a block at the very end, no final newline kept',
      live: `before\n${B}\nold\n${E}`,
      expected: `before\n${B}\n${body}${E}`,
    },
    {
      name: 'text after the block is kept',
      live: `a\n\n${B}\nold\n${E}\n\nb  \n  c`,
      expected: `a\n\n${B}\n${body}${E}\n\nb  \n  c`,
    },
    {
      name: 'a CRLF block body is replaced in CRLF',
      live: `a\r\n${B}\r\nold\r\n${E}\r\nz\r\n`,
      expected: `a\r\n${B}\r\n## Policy\r\n- one\r\n- two\r\n${E}\r\nz\r\n`,
    },
    {
      name: 'a BOM file with its block right after the BOM',
      live: `${BOM}${B}\nold\n${E}\n`,
      expected: `${BOM}${B}\n${body}${E}\n`,
    },
    {
      name: 'an empty block is filled',
      live: `x\n${B}\n${E}\n`,
      expected: `x\n${B}\n${body}${E}\n`,
    },
    {
      name: 'a lone CR in the text outside is kept',
      live: `a\rb\n${B}\nold\n${E}\n`,
      expected: `a\rb\n${B}\n${body}${E}\n`,
    },
  ];

  for (const { name, live, expected } of table) {
    describe(name, () => {
      it('gives exactly the expected bytes', () => {
        expect(Buffer.from(spliceBlock(live, body))).to.deep.equal(Buffer.from(expected));
      });

      it('is idempotent: a second splice of the same body returns identical bytes', () => {
        const once = spliceBlock(live, body);
        expect(sha256(spliceBlock(once, body))).to.equal(sha256(once));
      });

      it('leaves the bytes outside the markers unchanged (same sha256)', () => {
        const spliced = spliceBlock(live, body);
        if (findBlock(live) === null) {
          // Appending: the old file is a byte-exact prefix, apart from an added final newline.
          expect(spliced.startsWith(live)).to.equal(true);
        } else {
          const [was, now] = [outside(live), outside(spliced)];
          expect(sha256(now.before)).to.equal(sha256(was.before));
          expect(sha256(now.after)).to.equal(sha256(was.after));
        }
      });

      it('parses back to the body it was given', () => {
        expect(normaliseBody(findBlock(spliceBlock(live, body))?.body ?? 'absent')).to.equal(body);
      });
    });
  }

  it("converts the body's line endings to the file's own style", () => {
    expect(spliceBlock(`a\n${B}\n${E}\n`, 'x\r\ny\r\n')).to.equal(`a\n${B}\nx\ny\n${E}\n`);
    expect(spliceBlock(`a\r\n${B}\r\n${E}\r\n`, 'x\ny')).to.equal(
      `a\r\n${B}\r\nx\r\ny\r\n${E}\r\n`,
    );
  });

  it('writes an empty body as adjacent marker lines', () => {
    expect(spliceBlock(`${B}\nold\n${E}\n`, '')).to.equal(`${B}\n${E}\n`);
  });

  it('never deletes the span between reversed markers', () => {
    const live = `top\n${E}\nkeep me\n${B}\nbottom\n`;
    expect(codeOf(() => spliceBlock(live, body))).to.equal('MARKERS_REVERSED');
  });
});

const GB = GITCONFIG_MARKERS.begin;
const GE = GITCONFIG_MARKERS.end;
const BODY = '[user]\n\temail = ops@example.org\n';

describe('managed block (# markers of a config file)', () => {
  describe('splicing keeps everything outside the markers byte for byte', () => {
    const cases: { name: string; live: string; expected: string }[] = [
      { name: 'no file yet (empty)', live: '', expected: `${GB}\n${BODY}${GE}\n` },
      {
        name: "a user's file: the block is appended after one blank line",
        live: '[core]\n\teditor = vim\n',
        expected: `[core]\n\teditor = vim\n\n${GB}\n${BODY}${GE}\n`,
      },
      {
        name: 'a last line without a newline',
        live: '[core]\n\teditor = vim',
        expected: `[core]\n\teditor = vim\n\n${GB}\n${BODY}${GE}\n`,
      },
      {
        name: 'a file already ending with a blank line gets no second one',
        live: '[core]\n\teditor = vim\n\n',
        expected: `[core]\n\teditor = vim\n\n${GB}\n${BODY}${GE}\n`,
      },
      {
        name: 'CRLF endings and a BOM',
        live: '\ufeff[core]\r\n\teditor = vim\r\n',
        expected: `\ufeff[core]\r\n\teditor = vim\r\n\r\n${GB}\r\n[user]\r\n\temail = ops@example.org\r\n${GE}\r\n`,
      },
      {
        name: 'an existing block: only its body changes, text after it stays',
        live: `[a]\n\tx = 1\n${GB}\n[user]\n\temail = old@example.org\n${GE}\n[alias]\n\tco = checkout`,
        expected: `[a]\n\tx = 1\n${GB}\n${BODY}${GE}\n[alias]\n\tco = checkout`,
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
      { name: 'a lone begin', live: `${GB}\n[user]\n`, code: 'MARKERS_UNPAIRED' },
      { name: 'a lone end', live: `[user]\n${GE}\n`, code: 'MARKERS_UNPAIRED' },
      { name: 'an indented marker', live: `  ${GB}\n${GE}\n`, code: 'MARKERS_UNPAIRED' },
      {
        name: 'another spelling',
        live: `# FLEET:GITCONFIG:BEGIN\n${GE}\n`,
        code: 'MARKERS_UNPAIRED',
      },
      {
        name: 'two blocks',
        live: `${GB}\n${GE}\n${GB}\n${GE}\n`,
        code: 'MARKERS_DUPLICATE',
      },
      { name: 'reversed markers', live: `${GE}\n${GB}\n`, code: 'MARKERS_REVERSED' },
    ];
    for (const { name, live, code } of cases) {
      it(name, () => {
        expect(codeOf(() => findBlock(live, GITCONFIG_MARKERS))).to.equal(code);
        expect(codeOf(() => spliceBlock(live, BODY, GITCONFIG_MARKERS))).to.equal(code);
      });
    }

    it('refuses a body that contains a marker line', () => {
      expect(codeOf(() => spliceBlock('', `${BODY}${GE}\n`, GITCONFIG_MARKERS))).to.equal(
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

describe('managed block: a damaged marker is recognised whatever the comment syntax', () => {
  const syntaxes: { name: string; markers: BlockMarkers; damaged: string }[] = [
    {
      name: 'an INI `;` comment',
      markers: { begin: '; fleet:ini:begin', end: '; fleet:ini:end' },
      damaged: ';; FLEET:INI:BEGIN',
    },
    {
      name: 'a `//` comment',
      markers: { begin: '// fleet:js:begin', end: '// fleet:js:end' },
      damaged: '//fleet:js:begin (edited)',
    },
    {
      name: 'a `/* */` comment',
      markers: { begin: '/* fleet:css:begin */', end: '/* fleet:css:end */' },
      damaged: '  /* fleet:css:begin */',
    },
    {
      name: 'a `"` comment (vimrc)',
      markers: { begin: '" fleet:vim:begin', end: '" fleet:vim:end' },
      damaged: '"fleet:vim:begin',
    },
  ];
  for (const { name, markers, damaged } of syntaxes) {
    it(`${name}: an edited marker line refuses the file (never read as "no block")`, () => {
      expect(codeOf(() => editor.findBlock(`a\n${damaged}\nb\n`, markers))).to.equal(
        'MARKERS_UNPAIRED',
      );
      expect(editor.findBlock(`a\n${markers.begin}\nb\n${markers.end}\n`, markers)?.body).to.equal(
        'b\n',
      );
    });
  }
});
