/**
 * The receiver's check of its sshd, as data (sshd-check.ts; catalogue 70b): what `sshd -T` output
 * says, which settings let a session's environment in, and how the listener's process title
 * names its binary and config. The real `sshd -T` runs in test/e2e/ssh-recovery.test.ts.
 */
import { expect } from 'chai';
import {
  judgeSshdEnvironment,
  listenerOf,
  matchesPattern,
  parseSshdT,
} from '../src/bootstrap/sshd-check.js';

describe('sshd check: the environment a session may set for the receiver', () => {
  const judge = (lines: string[]) => judgeSshdEnvironment(parseSshdT(lines.join('\n')), 'test');
  const cases: [string, string[], RegExp | undefined][] = [
    [
      'the defaults (no; LANG, LC_*)',
      ['permituserenvironment no', 'acceptenv LANG', 'acceptenv LC_*'],
      undefined,
    ],
    ['PermitUserEnvironment yes', ['permituserenvironment yes'], /PermitUserEnvironment yes/],
    ['a pattern list', ['permituserenvironment LANG,TZ'], /PermitUserEnvironment LANG,TZ/],
    ['no such line (not sshd -T output)', ['port 22'], /printed no permituserenvironment/],
    [
      'AcceptEnv NODE_*',
      ['permituserenvironment no', 'acceptenv NODE_*'],
      /accepts NODE_OPTIONS, NODE_PATH/,
    ],
    ['AcceptEnv *', ['permituserenvironment no', 'acceptenv *'], /accepts PATH, NODE_OPTIONS/],
    [
      'AcceptEnv LD_?RELOAD',
      ['permituserenvironment no', 'acceptenv LD_?RELOAD'],
      /accepts LD_PRELOAD/,
    ],
    ['AcceptEnv PATHS (not PATH)', ['permituserenvironment no', 'acceptenv PATHS'], undefined],
    ['AcceptEnv !PATH alone', ['permituserenvironment no', 'acceptenv !PATH'], undefined],
  ];
  for (const [title, lines, expected] of cases) {
    it(`${title}: ${expected === undefined ? 'safe' : 'refused'}`, () => {
      const verdict = judge(lines);
      if (expected === undefined) expect(verdict).to.equal(undefined);
      else expect(verdict).to.match(expected);
    });
  }

  it('matches OpenSSH patterns whole, * and ? only', () => {
    expect(matchesPattern('NODE_OPTIONS', 'NODE_*')).to.equal(true);
    expect(matchesPattern('NODE_OPTIONS', 'NODE')).to.equal(false);
    expect(matchesPattern('PATH', 'P?TH')).to.equal(true);
    expect(matchesPattern('PATH', 'P.TH')).to.equal(false);
  });
});

describe("sshd check: the listener's binary and config from its process title", () => {
  const cases: [string, string, { sshd: string; config: string } | undefined][] = [
    [
      'OpenSSH ≥ 7 title with -f',
      'sshd: /usr/sbin/sshd -D -f /tmp/x/sshd_config -E /tmp/x/log [listener] 0 of 10-100 startups\0',
      { sshd: '/usr/sbin/sshd', config: '/tmp/x/sshd_config' },
    ],
    [
      'title without -f: the default config',
      'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups\0',
      { sshd: '/usr/sbin/sshd', config: '/etc/ssh/sshd_config' },
    ],
    [
      'an untitled argv',
      '/usr/local/sbin/sshd\0-D\0-f\0/etc/ssh/other\0',
      { sshd: '/usr/local/sbin/sshd', config: '/etc/ssh/other' },
    ],
    ['a session process', 'sshd: fleet@notty\0', undefined],
    ['a privileged session process', 'sshd: fleet [priv]\0', undefined],
    ['inetd mode (-i)', '/usr/sbin/sshd\0-i\0', undefined],
    ['a shell', '/bin/sh\0-c\0node run.js bootstrap receive\0', undefined],
    ['a relative binary', 'sshd: sshd -D [listener] 0 of 10\0', undefined],
  ];
  for (const [title, cmdline, expected] of cases) {
    it(`${title}: ${expected === undefined ? 'not a listener' : expected.config}`, () => {
      expect(listenerOf(cmdline)).to.deep.equal(expected);
    });
  }
});
