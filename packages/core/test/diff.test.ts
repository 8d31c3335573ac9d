import { expect } from 'chai';
import { unifiedDiff } from '../src/diff.js';

const LABELS = { from: 'a/~/.config/router/router.yaml', to: 'b/~/.config/router/router.yaml' };

describe('diff', () => {
  const equal: [title: string, text: string][] = [
    ['empty texts', ''],
    ['one line', 'a\n'],
    ['CRLF text', 'a\r\nb\r\n'],
    ['no final newline', 'a\nb'],
  ];
  for (const [title, text] of equal) {
    it(`equal texts give '' (${title})`, () => {
      expect(unifiedDiff(text, text, LABELS)).to.equal('');
    });
  }

  it('a changed line gives a unified diff with both labels', () => {
    const diff = unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', LABELS);
    const lines = diff.split('\n');
    expect(lines.slice(0, 2)).to.deep.equal([`--- ${LABELS.from}`, `+++ ${LABELS.to}`]);
    expect(lines).to.include.members(['@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c']);
  });

  it('never contains the === separator line jsdiff writes', () => {
    const diff = unifiedDiff('x\n', 'y\n', { from: 'same', to: 'same' });
    expect(diff).to.not.equal('');
    expect(diff.split('\n').filter((line) => line.startsWith('==='))).to.deep.equal([]);
  });

  it('keeps a body line that starts with === (only the header separator goes)', () => {
    const diff = unifiedDiff('title\n', '=== title ===\n', LABELS);
    expect(diff.split('\n')).to.include('+=== title ===');
  });

  it('honours the context option', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7'].join('\n') + '\n';
    const after = before.replace('4', 'four');
    const narrow = unifiedDiff(before, after, { ...LABELS, context: 0 });
    const wide = unifiedDiff(before, after, LABELS);
    expect(narrow).to.contain('@@ -4,1 +4,1 @@').and.not.contain(' 3\n');
    expect(wide).to.contain('@@ -1,7 +1,7 @@').and.contain(' 3\n');
  });

  it('shows a change of the final newline', () => {
    const diff = unifiedDiff('a\n', 'a', LABELS);
    expect(diff).to.contain('\\ No newline at end of file');
  });

  it('shows a line-ending-only change (CRLF vs LF) as a change', () => {
    expect(unifiedDiff('a\r\n', 'a\n', LABELS)).to.not.equal('');
  });
});
