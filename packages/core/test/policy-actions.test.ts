/**
 * The argv a node policy action runs with (core `actionArgv`, docs/node-policy.md): `~` and a
 * leading `~/` are the node's home, as a login shell expands them; `{file}` is the staged file a
 * validate action checks, and the two must come together — a validate action that cannot see the
 * new content would pass it unread, and an action naming `{file}` outside validation would run
 * with a literal `{file}`.
 */
import { expect } from 'chai';
import { isFleetError } from '../src/errors.js';
import { actionArgv } from '../src/policy/actions.js';
import { nodePolicySchema } from '../src/policy/schema.js';

const HOME = '/home/ops';
const STAGED = '/home/ops/.ssh/.fleet-tmp-01JTESTOPERATION0000000000-1';

describe('node policy action argv', () => {
  const cases: {
    name: string;
    argv: string[];
    file?: string;
    expected: string[] | 'POLICY_REFUSED';
  }[] = [
    { name: 'runs as spelled', argv: ['/usr/bin/true'], expected: ['/usr/bin/true'] },
    {
      name: 'expands ~ and ~/ to the home, the program too',
      argv: ['~/bin/check', '~', '~/.ssh/config'],
      expected: [`${HOME}/bin/check`, HOME, `${HOME}/.ssh/config`],
    },
    {
      name: 'leaves ~user, a ~ inside an argument and --x=~/y as they are (no shell)',
      argv: ['/usr/bin/env', '~root', 'a~/b', '--x=~/y'],
      expected: ['/usr/bin/env', '~root', 'a~/b', '--x=~/y'],
    },
    {
      name: 'names the staged file as {file}, alone or inside an argument',
      argv: ['/usr/bin/ssh', '-G', '-F', '{file}', '--config={file}', 'localhost'],
      file: STAGED,
      expected: ['/usr/bin/ssh', '-G', '-F', STAGED, `--config=${STAGED}`, 'localhost'],
    },
    {
      name: 'refuses a file for an argv that names no {file}',
      argv: ['/usr/bin/ssh', '-G', 'localhost'],
      file: STAGED,
      expected: 'POLICY_REFUSED',
    },
    {
      name: 'refuses {file} when no file is given (a reload or restart)',
      argv: ['/usr/bin/tmux', 'source-file', '{file}'],
      expected: 'POLICY_REFUSED',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const run = () =>
        actionArgv('demo', c.argv, {
          home: HOME,
          ...(c.file === undefined ? {} : { file: c.file }),
        });
      if (c.expected === 'POLICY_REFUSED') {
        try {
          run();
          expect.fail('accepted');
        } catch (error) {
          expect(isFleetError(error) && error.code).to.equal('POLICY_REFUSED');
        }
      } else expect(run()).to.deep.equal(c.expected);
    });
  }

  it('a policy accepts a program in the home (~/bin/check) and still refuses a relative one', () => {
    const policy = (program: string) =>
      nodePolicySchema.safeParse({
        version: 1,
        domains: { demo: { actions: { check: { argv: [program, '{file}'] } } } },
      }).success;
    expect(policy('~/bin/check')).to.equal(true);
    expect(policy('bin/check')).to.equal(false);
    expect(policy('~/../etc/x')).to.equal(false);
    expect(policy('~')).to.equal(false);
  });
});
