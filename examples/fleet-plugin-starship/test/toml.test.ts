import { expect } from 'chai';
import { tomlProblems } from '../src/index.js';

const SOURCE = 'domains/starship/starship.toml';

describe('starship plugin: the TOML check (smol-toml)', () => {
  const accepted: [string, string][] = [
    ['an empty file', ''],
    [
      'a table and strings',
      'add_newline = false\n\n[character]\nsuccess_symbol = "[>](bold green)"\n',
    ],
    ['a placeholder inside a string', 'format = "{{ secret.PROMPT_TOKEN }}"\n'],
    ['CRLF line endings', 'add_newline = true\r\n[line_break]\r\ndisabled = true\r\n'],
  ];
  for (const [what, content] of accepted) {
    it(`accepts ${what}`, () => {
      expect(tomlProblems(content, SOURCE)).to.deep.equal([]);
    });
  }

  const refused: [string, string, number][] = [
    ['a key without a value', 'add_newline =\n', 1],
    ['an unclosed table header', 'add_newline = false\n[character\n', 2],
    ['a key defined twice', 'a = 1\na = 2\n', 2],
    ['an unquoted string', '[character]\nsuccess_symbol = >\n', 2],
  ];
  for (const [what, content, line] of refused) {
    it(`refuses ${what}, naming line ${line} and never the text`, () => {
      const problems = tomlProblems(content, SOURCE);
      expect(problems).to.have.length(1);
      expect(problems[0]).to.deep.include({ file: SOURCE, line });
      expect(problems[0]?.message).to.match(/^not TOML starship can read \(column \d+\)$/);
    });
  }
});
