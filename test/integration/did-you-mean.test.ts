/**
 * Mistyped commands and host names, and shell completion, through the real binary (contract §7):
 * a miss is a usage error (exit 2) with the closest visible command or fleet.yaml host as a hint,
 * and with --json the error envelope is all of stdout; `fleet autocomplete` writes completion
 * scripts (@oclif/plugin-autocomplete), whose bash function fleet wraps to complete host names.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { FLEET_BIN, fleet, json, tempDir } from '../src/fleet.js';

const git = (repo: string, ...args: string[]) =>
  execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });

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

  describe('a fleet of alpha and beta (issue 35, as a new user met it)', () => {
    let repo: string;
    before(async () => {
      repo = join(dir.path, 'alpha-beta');
      expect((await fleet(['init', repo], { env })).exitCode).to.equal(0);
      const manifest = await readFile(join(repo, 'fleet.yaml'), 'utf8');
      const entry = manifest.slice(
        manifest.indexOf('  node-01:'),
        manifest.indexOf('\ndomains:\n') + 1,
      );
      const hosts = [
        entry.replace('node-01', 'alpha'),
        entry.replace('node-01', 'beta').replace(':7701', ':7702'),
      ];
      await writeFile(join(repo, 'fleet.yaml'), manifest.replace(entry, hosts.join('')));
      await rename(join(repo, 'hosts', 'node-01.yaml'), join(repo, 'hosts', 'alpha.yaml'));
      git(repo, 'add', '-A');
      git(
        repo,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@e.invalid',
        'commit',
        '-qm',
        'alpha, beta',
      );
    });

    // drift --host alfa said no "did you mean" at all; upgrade betta said it twice.
    const cases: [args: string[], guess: string][] = [
      [['drift', '--host', 'alfa'], 'alpha'],
      [['upgrade', 'betta'], 'beta'],
      [['upgrade', 'betta', '--confirm'], 'beta'],
      [['config', 'plan', 'alfa'], 'alpha'],
      [['version', '--host', 'betta'], 'beta'],
    ];
    for (const [args, guess] of cases) {
      it(`fleet ${args.join(' ')}: did you mean ${guess}?, once (UNKNOWN_HOST, exit 2)`, async () => {
        const credentials = join(dir.path, 'credentials.json');
        await writeFile(credentials, '{"version":1,"hosts":{}}\n', { mode: 0o600 });
        const human = await fleet([...args, '--repo', repo], {
          env: { ...env, FLEET_CREDENTIALS: credentials },
        });
        expect(human.exitCode, human.stderr).to.equal(2);
        expect(human.stderr.match(/did you mean/g), human.stderr).to.have.length(1);
        expect(human.stderr).to.contain(`hint: did you mean ${guess}?`);
        const machine = await fleet([...args, '--repo', repo, '--json'], {
          env: { ...env, FLEET_CREDENTIALS: credentials },
        });
        const { error } = json<Envelope>(machine);
        expect(error.code).to.equal('UNKNOWN_HOST');
        expect(error.suggestions).to.deep.equal([`did you mean ${guess}?`]);
      });
    }

    it('bash completion completes --host and a HOST argument with the hosts of fleet.yaml', async function () {
      const bash = spawnSync('bash', ['--version']);
      if (bash.status !== 0) this.skip();
      const built = await fleet(['autocomplete', 'bash'], { env });
      expect(built.exitCode, built.stderr).to.equal(0);
      // `fleet` on PATH, as the completion runs it (the word typed first)
      const bin = join(dir.path, 'bin');
      await mkdir(bin, { recursive: true });
      await writeFile(
        join(bin, 'fleet'),
        `#!/bin/sh\nexec '${process.execPath}' '${FLEET_BIN}' "$@"\n`,
        {
          mode: 0o755,
        },
      );
      const functions = join(
        env['XDG_CACHE_HOME'] as string,
        'fleet',
        'autocomplete',
        'functions',
        'bash',
        'fleet.bash',
      );
      /** What the completion offers for each line (the last word is the one being completed). */
      const complete = (lines: readonly (readonly string[])[], cwd: string): string[] => {
        const script = [
          `source '${functions}'`,
          'complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _fleet_host_autocomplete; echo "${COMPREPLY[*]}"; }',
          ...lines.map((words) => `complete_line ${words.map((w) => `'${w}'`).join(' ')}`),
        ].join('\n');
        const run = spawnSync('bash', ['-c', script], {
          cwd,
          env: {
            ...process.env,
            ...env,
            PATH: `${bin}:${process.env['PATH'] ?? ''}`,
            FLEET_RESIDENT: 'off',
            FLEET_REPO: '',
          },
          encoding: 'utf8',
        });
        expect(run.status, run.stderr).to.equal(0);
        return run.stdout.split('\n').slice(0, lines.length);
      };
      const inRepo: [words: string[], offered: string][] = [
        [['fleet', 'drift', '--host', ''], 'alpha beta'],
        [['fleet', 'drift', '--host', 'al'], 'alpha'],
        [['fleet', 'drift', '--timeout', '5', '--host', ''], 'alpha beta'],
        [['fleet', 'config', 'plan', ''], 'alpha beta'],
        [['fleet', 'upgrade', 'b'], 'beta'],
        [['fleet', 'config', 'adopt', '--accept-drift-on', ''], 'alpha beta'],
        [['fleet', 'config', 'plan', 'alpha', ''], ''], // the domain: not a host
        [['fleet', 'config', ''], 'adopt export install inventory plan'], // commands as before
        [['fleet', 'drift', '--ti'], '--timeout'], // flags as before
      ];
      expect(
        complete(
          inRepo.map(([words]) => words),
          repo,
        ),
      ).to.deep.equal(inRepo.map(([, offered]) => offered));
      // elsewhere: the repository --repo names on the line, else none (nothing offered)
      const elsewhere: [words: string[], offered: string][] = [
        [['fleet', 'drift', '--repo', repo, '--host', ''], 'alpha beta'],
        [['fleet', 'config', 'plan', '--repo', repo, ''], 'alpha beta'],
        [['fleet', 'upgrade', `--repo=${repo}`, 'b'], 'beta'],
        [['fleet', 'drift', '--host', ''], ''],
      ];
      expect(
        complete(
          elsewhere.map(([words]) => words),
          dir.path,
        ),
      ).to.deep.equal(elsewhere.map(([, offered]) => offered));
    });
  });
});
