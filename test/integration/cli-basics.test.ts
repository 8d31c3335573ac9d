/** The CLI shell: version, help, --json envelopes and exit codes for usage errors. */
import { expect } from 'chai';
import { Config } from '@oclif/core';
import { join } from 'node:path';
import { ROOT, fleet, json } from '../src/fleet.js';

describe('fleet CLI shell', () => {
  it("answers --version with exactly oclif's user agent line", async () => {
    const config = await Config.load({ root: join(ROOT, 'packages', 'cli') });
    const run = await fleet(['--version']);
    expect(run.exitCode).to.equal(0);
    expect(run.stdout).to.equal(`${config.userAgent}\n`);
  });

  it('lists its commands in --help, with examples per command', async () => {
    const top = await fleet(['--help']);
    expect(top.exitCode).to.equal(0);
    expect(top.stdout)
      .to.match(/\n\s+init\s/)
      .and.to.match(/\n\s+validate\s/);
    const validate = await fleet(['validate', '--help']);
    expect(validate.stdout).to.contain('EXAMPLES').and.to.contain('--json');
  });

  it('turns a bad flag into a usage error: exit 2, one line, or the JSON envelope', async () => {
    const human = await fleet(['validate', '--no-such-flag']);
    expect(human.exitCode).to.equal(2);
    expect(human.stdout).to.equal('');
    expect(human.stderr).to.match(/^Error: Nonexistent flag: --no-such-flag\n/);
    const machine = await fleet(['validate', '--no-such-flag', '--json']);
    expect(machine.exitCode).to.equal(2);
    expect(json(machine)).to.deep.equal({
      error: {
        code: 'USAGE',
        message: 'Nonexistent flag: --no-such-flag',
        exitCode: 2,
        suggestions: ['see --help'],
      },
    });
  });
});
