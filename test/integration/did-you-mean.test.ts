/**
 * Mistyped commands and host names, and shell completion, through the real binary (contract §7):
 * a miss is a usage error (exit 2) with the closest visible command or fleet.yaml host as a hint,
 * and with --json the error envelope is all of stdout; `fleet autocomplete` writes completion
 * scripts (@oclif/plugin-autocomplete).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleet, json, tempDir } from '../src/fleet.js';

interface Envelope {
  error: { code: string; message: string; exitCode: number; suggestions?: string[] };
}

describe('did you mean, and shell completion', function () {
  this.timeout(120_000);
  let dir: { path: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  before(async () => {
    dir = await tempDir('fleet-did-you-mean-');
    // completion caches go to the config and cache dirs: keep them in the test's directory
    env = {
      XDG_CACHE_HOME: join(dir.path, 'cache'),
      XDG_CONFIG_HOME: join(dir.path, 'config'),
      HOME: dir.path,
    };
  });
  after(() => dir.cleanup());

  it('fleet nosuch --json: the JSON error envelope, exit 2', async () => {
    const run = await fleet(['nosuch', '--json'], { env });
    expect(run.exitCode, run.stderr).to.equal(2);
    expect(json<Envelope>(run)).to.deep.equal({
      error: {
        code: 'USAGE',
        message: 'fleet nosuch: not a fleet command',
        exitCode: 2,
        suggestions: ['see fleet --help for the commands'],
      },
    });
  });

  const typos: [string[], string][] = [
    [['statsu'], 'fleet status'],
    [['confg', 'install', 'node-01', 'router'], 'fleet config install'],
    [['token', 'rotat', '--host', 'node-01'], 'fleet token rotate'],
    [['bootstrap', 'pln', 'node-01'], 'fleet bootstrap plan'],
  ];
  for (const [args, guess] of typos) {
    it(`fleet ${args.join(' ')}: did you mean \`${guess}\`? (exit 2, nothing run)`, async () => {
      const run = await fleet(args, { env });
      expect(run.exitCode, run.stderr).to.equal(2);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.contain(`hint: did you mean \`${guess}\`?`);
    });
  }

  it('never guesses a hidden internal command', async () => {
    const run = await fleet(['bootstrap', 'receiv'], { env });
    expect(run.exitCode).to.equal(2);
    expect(run.stderr).to.not.contain('bootstrap receive');
  });

  it('a mistyped host suggests the closest host in fleet.yaml (UNKNOWN_HOST, exit 2)', async () => {
    const repo = join(dir.path, 'fleet');
    expect((await fleet(['init', repo], { env })).exitCode).to.equal(0);
    const run = await fleet(['version', '--host', 'node-1', '--repo', repo, '--json'], { env });
    expect(run.exitCode, run.stderr).to.equal(2);
    const { error } = json<Envelope>(run);
    expect(error.code).to.equal('UNKNOWN_HOST');
    expect(error.suggestions).to.deep.equal(['did you mean node-01?']);
    expect(error.message).to.not.contain('did you mean');
    const far = await fleet(['version', '--host', 'web', '--repo', repo, '--json'], { env });
    expect(json<Envelope>(far).error.suggestions ?? []).to.deep.equal([]);
    // Printed for a person once, under the error, whichever verb refuses the host.
    const credentials = join(dir.path, 'credentials.json');
    await writeFile(credentials, '{"version":1,"hosts":{}}\n', { mode: 0o600 });
    for (const verb of [['drift', '--host'], ['upgrade']]) {
      const human = await fleet([...verb, 'node-1', '--repo', repo], {
        env: { ...env, FLEET_CREDENTIALS: credentials },
      });
      expect(human.exitCode, human.stderr).to.equal(2);
      expect(human.stderr.match(/did you mean/g), human.stderr).to.have.length(1);
      expect(human.stderr).to.contain('hint: did you mean node-01?');
    }
  });

  it('writes a bash completion script for fleet', async () => {
    const run = await fleet(['autocomplete', 'script', 'bash'], { env });
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stdout).to.contain('FLEET_AC_BASH_SETUP_PATH');
  });
});
