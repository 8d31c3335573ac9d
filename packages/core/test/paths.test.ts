import { expect } from 'chai';
import { posix, win32 } from 'node:path';
import { FleetError } from '../src/errors.js';
import { isHomePath, parseHomePath, parseNodePathArgument, parseRepoPath } from '../src/paths.js';

function thrown(fn: () => unknown): FleetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError to be thrown');
}

/** Inputs of the catalogue's "Path syntax" (case 36) and "Unicode in paths" (case 37). */
const REFUSED: [input: string, why: RegExp][] = [
  ['../x', /must start with ~\//],
  ['a/../../x', /must start with ~\//],
  ['~/a/../../x', /".." component/],
  ['~/..', /".." component/],
  ['/etc/passwd', /must start with ~\//],
  ['~/../etc/passwd', /".." component/],
  ['~root/x', /must start with ~\//],
  ['~', /must start with ~\//],
  ['a\\..\\..\\x', /backslash/],
  ['~/a\\..\\..\\x', /backslash/],
  ['~/dir\\file', /backslash/],
  ['%2e%2e/', /must start with ~\//],
  ['~/%2e%2e/', /empty component/],
  ['~/a\u0000b', /control, NUL/],
  ['~/a\nb', /control, NUL/],
  ['~/a\u001b[2Jb', /control, NUL/],
  ['~/a\u009bb', /control, NUL/],
  [`~/${'a'.repeat(5000)}`, /too long/], // a 5,000-byte name
  [`~/${'a/'.repeat(2499)}a`, /too long/], // 5,000 bytes of short components
  [`~/${'é'.repeat(600)}`, /too long/], // 600 characters, 1,200 bytes
  [`~/${'a'.repeat(300)}`, /component too long/],
  [`~/${'é'.repeat(128)}`, /component too long/], // 128 characters, 256 bytes
  ['~/a/', /empty component/],
  ['~/', /empty component/],
  ['~/a//b', /empty component/],
  ['', /empty/],
  ['.', /must start with ~\//],
  ['~/.', /"\." component/],
  ['~/a/./b', /"\." component/],
  ['~/CON', /reserved device name/],
  ['~/con', /reserved device name/],
  ['~/nul.txt', /reserved device name/],
  ['~/dir/Aux.tar.gz', /reserved device name/],
  ['~/COM1', /reserved device name/],
  ['~/com¹.log', /reserved device name/],
  ['~/LPT³', /reserved device name/],
  ['~/lpt9.log', /reserved device name/],
  ['~/x:stream', /colon/],
  ['~/C:/x', /colon/],
  ['~/.git::$INDEX_ALLOCATION', /colon/],
  ['~/a<b', /reserved on Windows/],
  ['~/a|b', /reserved on Windows/],
  ['~/a?b', /reserved on Windows/],
  ['~/a*b', /reserved on Windows/],
  ['~/a"b', /reserved on Windows/],
  ['~/file.', /trailing dot or space/],
  ['~/file ', /trailing dot or space/],
  ['~/dir./file', /trailing dot or space/],
  ['~/...', /trailing dot or space/],
  ['~/evil\u202etxt.exe', /bidi/],
  ['~/a\u200db', /bidi/], // zero-width joiner
  ['~/a\u200bb', /bidi/], // zero-width space
  ['~/\ufeffa', /bidi/],
  ['~/a\u2066b', /bidi/],
];

const ACCEPTED: [input: string, components: string[]][] = [
  ['~/.config/router/router.yaml', ['.config', 'router', 'router.yaml']],
  ['~/CLAUDE.md', ['CLAUDE.md']],
  ['~/.hidden', ['.hidden']],
  ['~/a..b', ['a..b']],
  ['~/..a', ['..a']],
  ['~/%2e%2e/x', ['%2e%2e', 'x']], // percent-encoding is never decoded: literal characters
  ['~/．．／x', ['．．／x']], // full-width dots and solidus are plain characters, not ".." or "/"
  ['~/．．/x', ['．．', 'x']],
  ['~/café/naïve.txt', ['café', 'naïve.txt']],
  ['~/console.log', ['console.log']], // not CON: the device name must be the whole stem
  ['~/nullable', ['nullable']],
  ['~/com10', ['com10']],
  ['~/a b/c', ['a b', 'c']],
  ['~/a~b/~', ['a~b', '~']],
  [`~/${'a'.repeat(255)}`, ['a'.repeat(255)]],
];

describe('paths', () => {
  describe('parseHomePath refuses (catalogue 36, 37)', () => {
    for (const [input, why] of REFUSED) {
      const shown = JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input);
      it(`${shown} → PATH_INVALID ${String(why)}`, () => {
        const error = thrown(() => parseHomePath(input));
        expect(error.code).to.equal('PATH_INVALID');
        expect(error.exitCode).to.equal(2);
        expect(error.message).to.match(why);
        expect(isHomePath(input)).to.equal(false);
      });
    }

    it('refuses non-string input with PATH_INVALID, not a TypeError', () => {
      expect(thrown(() => parseHomePath(undefined as unknown as string)).code).to.equal(
        'PATH_INVALID',
      );
    });
  });

  describe('parseHomePath accepts', () => {
    for (const [input, components] of ACCEPTED) {
      it(`${JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input)}`, () => {
        expect(parseHomePath(input)).to.deep.equal(components);
        expect(isHomePath(input)).to.equal(true);
      });
    }

    it('every accepted path stays inside the home under both posix and win32 rules', () => {
      for (const [input] of ACCEPTED) {
        const parts = parseHomePath(input);
        expect(posix.resolve('/home/u', ...parts).startsWith('/home/u/'), input).to.equal(true);
        expect(
          win32.resolve('C:\\Users\\u', ...parts).startsWith('C:\\Users\\u\\'),
          input,
        ).to.equal(true);
      }
    });

    it('compares exact code points: NFC and NFD spellings stay distinct', () => {
      const nfc = '~/caf\u00e9';
      const nfd = '~/cafe\u0301';
      expect(parseHomePath(nfc)).to.not.deep.equal(parseHomePath(nfd));
      expect(parseHomePath(nfd)).to.deep.equal(['cafe\u0301']);
    });
  });

  describe('error messages are safe to print', () => {
    const cases: [input: string, raw: string][] = [
      ['~/a\u0000b', '\u0000'],
      ['~/a\u001b[2Jb', '\u001b'],
      ['~/a\u009b2Jb', '\u009b'],
      ['~/evil\u202etxt.exe', '\u202e'],
      ['~/a\u200db', '\u200d'],
      ['~/a\nb', '\n'],
    ];
    for (const [input, raw] of cases) {
      it(`escapes U+${raw.charCodeAt(0).toString(16).padStart(4, '0')} instead of printing it`, () => {
        const { message } = thrown(() => parseHomePath(input));
        expect(message).to.not.contain(raw);
        expect(message).to.match(/\\u00[0-9a-f]{2}|\\u20[0-9a-f]{2}|\\n/);
      });
    }
  });

  describe('parseRepoPath', () => {
    it('accepts plain relative paths', () => {
      expect(parseRepoPath('domains/router/router.yaml')).to.deep.equal([
        'domains',
        'router',
        'router.yaml',
      ]);
      expect(parseRepoPath('mirror/.gitkeep')).to.deep.equal(['mirror', '.gitkeep']);
    });

    const refused: [input: string, why: RegExp][] = [
      ['.git/config', /\.git component/],
      ['.GIT/config', /\.GIT component/],
      ['a/.Git/hooks/post-checkout', /\.Git component/],
      ['mirror/node-01/.gIt', /\.gIt component/],
      ['mirror/node-01/GIT~1/config', /GIT~1 component/],
      ['mirror/node-01/.gitmodules', /\.gitmodules component/],
      ['.git/', /empty component/],
      ['/etc/passwd', /relative to the repository/],
      ['~/x', /relative to the repository/],
      ['sub/../../x', /".." component/],
      ['a\\b', /backslash/],
      ['.git::$INDEX_ALLOCATION/x', /colon/],
    ];
    for (const [input, why] of refused) {
      it(`refuses ${JSON.stringify(input)}`, () => {
        const error = thrown(() => parseRepoPath(input));
        expect(error.code).to.equal('PATH_INVALID');
        expect(error.message).to.match(why);
      });
    }
  });
});

describe('parseNodePathArgument: one parser for adopt, export and install --file', () => {
  const HOME = '/home/op';
  const cases: [raw: string, home: string | undefined, expected: string | RegExp][] = [
    ['~/.claude/CLAUDE.md', HOME, '~/.claude/CLAUDE.md'],
    // what the shell makes of an unquoted ~/.claude/CLAUDE.md
    ['/home/op/.claude/CLAUDE.md', HOME, '~/.claude/CLAUDE.md'],
    ['/home/op/.claude/CLAUDE.md', '/home/op/', '~/.claude/CLAUDE.md'],
    ['/home/operator/x', HOME, /is not a node path: .*quote it .*'~\/…'/],
    ['/etc/passwd', HOME, /is not a node path/],
    ['.claude/CLAUDE.md', HOME, /is not a node path/],
    ['/home/op/.claude/CLAUDE.md', undefined, /is not a node path/],
    ['/home/op', HOME, /is not a node path/],
    ['/home/op/a/../../x', HOME, /".." component/],
    ['~/a//b', HOME, /empty component/],
  ];
  for (const [raw, home, expected] of cases) {
    it(`${raw} (HOME ${home ?? 'unset'}) → ${String(expected)}`, () => {
      if (typeof expected === 'string') {
        const parsed = parseNodePathArgument(raw, home);
        expect(parsed.path).to.equal(expected);
        expect(parsed.mappedFromHome).to.equal(raw !== expected);
      } else {
        const error = thrown(() => parseNodePathArgument(raw, home));
        expect(error.code).to.equal('PATH_INVALID');
        expect(error.exitCode).to.equal(2);
        expect(error.message).to.match(expected);
      }
    });
  }
});
