/** The human `fleet version` output's wording (issue 17: "git git version 2.39.5"). */
import { expect } from 'chai';
import { withoutName } from '../src/commands/version.js';

describe('fleet version: a tool version line without its name twice', () => {
  const cases: [name: string, version: string, shown: string][] = [
    ['git', 'git version 2.39.5', 'version 2.39.5'],
    ['node', 'v20.19.0', 'v20.19.0'],
    ['python3', 'Python 3.11.2', 'Python 3.11.2'],
    ['git', 'gitx 1.0', 'gitx 1.0'],
  ];
  for (const [name, version, shown] of cases) {
    it(`${name}: ${version} → ${name} ${shown}`, () => {
      expect(withoutName(name, version)).to.equal(shown);
    });
  }
});
