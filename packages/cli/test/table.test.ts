/** Human tables: a header row and aligned columns (issue 17: `token list`, `audit show`). */
import { expect } from 'chai';
import { renderTable } from '../src/table.js';

describe('renderTable', () => {
  it('pads every column to its widest cell under a header row, without trailing blanks', () => {
    expect(
      renderTable(
        ['ID', 'CLIENT', 'STATE'],
        [
          ['tok_1', 'laptop', 'active'],
          ['tok_22', 'ci', 'revoked'],
        ],
      ),
    ).to.deep.equal(['ID      CLIENT  STATE', 'tok_1   laptop  active', 'tok_22  ci      revoked']);
  });

  it('is the header alone for no rows, and an empty last column leaves no blanks', () => {
    expect(renderTable(['A', 'B'], [])).to.deep.equal(['A  B']);
    expect(renderTable(['A', ''], [['x', '']])).to.deep.equal(['A', 'x']);
  });
});
