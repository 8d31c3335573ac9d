/**
 * The runtime layout's names (contract §12; docs/runtime-lifecycle.md, "Windows paths"): a
 * generation directory is the build id, on Windows its first 16 hex digits, and a supervised
 * command is read back whichever of the two it names. Pure functions, tables of cases.
 */
import { expect } from 'chai';
import {
  describeRuntimeCommand,
  generationName,
  isGenerationNameOf,
  runtimeLayout,
  WIN32_GENERATION_PATH_BUDGET,
  WIN32_MAX_PATH_CHARS,
  WIN32_ROOT_BUDGET,
} from '../src/index.js';

const ID = '0123456789abcdef'.repeat(4);

describe('runtime layout: generation names', () => {
  const names: [Parameters<typeof generationName>[1], string][] = [
    ['linux', ID],
    ['darwin', ID],
    ['win32', '0123456789abcdef'],
  ];
  for (const [platform, name] of names) {
    it(`names a generation ${name.length} hex digits long on ${platform}`, () => {
      expect(generationName(ID, platform)).to.equal(name);
      expect(
        runtimeLayout('/h', platform).generation(ID).endsWith(`/generations/${name}`),
      ).to.equal(true);
    });
  }

  const belongs: [string, string, boolean][] = [
    [ID, ID, true],
    ['0123456789abcdef', ID, true],
    ['0123456789abcdee', ID, false],
    ['0123456789abcd', ID, false],
    [`${ID.slice(0, 63)}0`, ID, false],
  ];
  for (const [name, buildId, expected] of belongs) {
    it(`${expected ? 'accepts' : 'refuses'} ${name.slice(0, 20)}… (${name.length}) as a name of the build`, () => {
      expect(isGenerationNameOf(name, buildId)).to.equal(expected);
    });
  }

  const commands: [string, string, string | null][] = [
    [
      'a Linux generation',
      `/home/u/.local/share/fleet/runtime/generations/${ID}/package/bin/run.js`,
      ID,
    ],
    [
      'a Windows short name',
      'C:\\Users\\u\\AppData\\Local\\fleet\\runtime\\generations\\0123456789abcdef\\package\\bin\\run.js',
      '0123456789abcdef',
    ],
    [
      'a directory of 20 hex digits',
      'C:\\Users\\u\\AppData\\Local\\fleet\\runtime\\generations\\0123456789abcdef0123\\package\\bin\\run.js',
      null,
    ],
    ['a checkout', '/src/fleet/packages/cli/bin/run.js', null],
  ];
  for (const [what, script, buildId] of commands) {
    it(`reads the generation of a supervised command run from ${what}`, () => {
      const argv = ['node', script, 'controller', 'serve', '--node-id', 'n1'];
      expect(describeRuntimeCommand(argv).buildId).to.equal(buildId);
    });
  }

  it('budgets the Windows root and what lies below it with room to spare under MAX_PATH', () => {
    expect(WIN32_MAX_PATH_CHARS).to.equal(259);
    expect(WIN32_ROOT_BUDGET + WIN32_GENERATION_PATH_BUDGET).to.be.at.most(
      WIN32_MAX_PATH_CHARS - 25,
    );
    // C:\Users\<40-character profile>\AppData\Local\fleet\runtime fits its budget.
    const root = `C:\\Users\\${'p'.repeat(40)}\\AppData\\Local\\fleet\\runtime`;
    expect(root.length).to.be.at.most(WIN32_ROOT_BUDGET);
  });
});
