/**
 * The plugin boundary (contract §2) through the real CLI: user plugins linked into an isolated data
 * directory are loaded next to the five bundled ones. A plugin that fails, targets another plugin
 * API, declares a path outside the home or claims another plugin's domain is refused with a
 * warning naming it — and the CLI goes on with the others.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, fleet, json, tempDir } from '../src/fleet.js';

async function linkPlugins(dataDir: string, names: readonly string[]): Promise<void> {
  // The layout @oclif/plugin-plugins writes for `fleet plugins link`.
  const plugins = names.map((name) => ({
    name,
    type: 'link',
    root: join(FIXTURES, 'plugins', name),
  }));
  await writeFile(
    join(dataDir, 'package.json'),
    JSON.stringify({ private: true, oclif: { schema: 1, plugins } }),
  );
}

describe('plugin boundary', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let repo: string;
  let env: Record<string, string>;
  beforeEach(async () => {
    dir = await tempDir();
    repo = join(dir.path, 'fleet');
    env = {
      FLEET_DATA_DIR: dir.path,
      FLEET_CONFIG_DIR: join(dir.path, 'config'),
      FLEET_CACHE_DIR: join(dir.path, 'cache'),
    };
    expect((await fleet(['init', repo], { env })).exitCode).to.equal(0);
  });
  afterEach(() => dir.cleanup());

  it('loads a well-formed third-party domain next to the bundled ones', async () => {
    await linkPlugins(dir.path, ['fixture-dotfile']);
    const run = await fleet(['validate', '--repo', repo, '--json'], { env });
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stderr).to.equal('');
    const manifest = join(repo, 'fleet.yaml');
    const { readFile } = await import('node:fs/promises');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace('- router', '- nosuch'));
    const failing = await fleet(['validate', '--repo', repo], { env });
    expect(failing.stderr).to.contain(
      '(registered: dotfile, files, harness-policy, router, transport-identity)',
    );
  });

  it('refuses each bad plugin with a warning naming it, and keeps working', async () => {
    await linkPlugins(dir.path, [
      'fixture-broken-hook',
      'fixture-future-api',
      'fixture-router-clash',
      'fixture-outside-home',
    ]);
    const run = await fleet(['validate', '--repo', repo, '--json'], { env });
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(json(run)['valid']).to.equal(true);
    const warnings = run.stderr.trim().split('\n');
    expect(warnings).to.have.length(4);
    expect(warnings).to.include(
      'warning: plugin fixture-broken-hook@1.0.0 failed to register: fixture: cannot register',
    );
    expect(warnings).to.include(
      'warning: plugin fixture-future-api@1.0.0 targets fleet plugin API 2, but this fleet provides plugin API 1',
    );
    expect(warnings).to.include(
      'warning: plugin fixture-router-clash@1.0.0 claims domain router, already owned by plugin @fleet/plugin-router@0.1.0',
    );
    expect(warnings.find((w) => w.includes('fixture-outside-home'))).to.match(
      /invalid registration: .*files\[0\]\.path: must be a ~\/-relative path inside the node home/,
    );
  });

  it('never loads plugin code for --version and --help', async () => {
    await linkPlugins(dir.path, ['fixture-broken-hook']);
    for (const args of [['--version'], ['--help']]) {
      const run = await fleet(args, { env });
      expect(run.exitCode).to.equal(0);
      expect(run.stderr).to.equal('');
    }
  });
});
