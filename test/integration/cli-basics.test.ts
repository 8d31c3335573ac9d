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

  it('names a missing argument with its description, on one line and complete in the JSON message', async () => {
    const human = await fleet(['config', 'export', 'node-01']);
    expect(human.exitCode).to.equal(2);
    expect(human.stderr).to.match(
      /^Error: Missing 1 required arg: path — the file, ~\/-relative \(quote it: '~\/…'\)\n/,
    );
    const machine = await fleet(['config', 'adopt', '--json']);
    expect(machine.exitCode).to.equal(2);
    expect(json<{ error: { message: string } }>(machine).error.message).to.equal(
      "Missing 2 required args: host — host (as in fleet.yaml); path — the live file, ~/-relative (quote it: '~/…')",
    );
  });

  it('describes each topic by itself, not by its first subcommand', async () => {
    const top = await fleet(['--help']);
    const topics = top.stdout.slice(top.stdout.indexOf('TOPICS'), top.stdout.indexOf('COMMANDS'));
    expect(topics).to.match(/\n\s+lab\s+A local fleet on 127\.0\.0\.1/);
    expect(topics).to.match(/\n\s+config\s+One host's managed files/);
    expect(topics).to.not.contain('Stop the processes a lab started');
    // issue 35: plugins read as its one authoring command, "Write a new domain plugin package…"
    expect(topics).to.match(/\n\s+plugins\s+Plugins: list, install, link, update \(oclif\); new/);
    expect(topics).to.not.contain('Write a new domain plugin package');
  });
});
