/**
 * `fleet validate`'s service (operator/config/validate.ts) on a repository with no plugin: what a
 * valid working tree answers (the commit drift would read, what is not committed yet), and that a
 * fleet.yaml that does not parse fails before any plugin is loaded. The whole verb, with init's
 * repository and every bundled plugin, is test/integration/init-validate.test.ts.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFleetError, type Registry } from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';
import { validateWorkingTree } from '../src/config/validate.js';

const MANIFEST = `apiVersion: fleet/v1
canonicalVersion: 1.0.0
hosts:
  alpha:
    controller: http://127.0.0.1:7701
    platform: linux
    supervisor: lab
`;

function git(root: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], {
    cwd: root,
    stdio: 'ignore',
  });
}

describe('validate service: the working tree, and what drift would read instead', () => {
  let root: string;
  let registryLoads: number;
  const loadRegistry = async (): Promise<Registry> => {
    registryLoads += 1;
    return registryFromHooks([]);
  };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-validate-'));
    registryLoads = 0;
    await mkdir(join(root, 'hosts'));
    await writeFile(join(root, 'fleet.yaml'), MANIFEST);
    await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
    git(root, 'init', '--quiet');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const rows: [
    name: string,
    arrange: () => void | Promise<void>,
    expected: { headCommit: 'none' | 'head'; uncommitted: string[] },
  ][] = [
    [
      'nothing committed yet: every file is not committed',
      () => undefined,
      { headCommit: 'none', uncommitted: ['fleet.yaml', 'hosts/alpha.yaml'] },
    ],
    [
      'everything committed',
      () => {
        git(root, 'add', '-A');
        git(root, 'commit', '--quiet', '-m', 'init');
      },
      { headCommit: 'head', uncommitted: [] },
    ],
    [
      'a host file edited after the commit',
      async () => {
        git(root, 'add', '-A');
        git(root, 'commit', '--quiet', '-m', 'init');
        await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n# edited\n');
      },
      { headCommit: 'head', uncommitted: ['hosts/alpha.yaml'] },
    ],
  ];
  for (const [name, arrange, expected] of rows) {
    it(name, async () => {
      await arrange();
      const tree = await validateWorkingTree({ root, loadRegistry });
      const head =
        expected.headCommit === 'none'
          ? null
          : execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
      expect(tree).to.deep.equal({
        hosts: 1,
        domains: 0,
        rendered: 0,
        headCommit: head,
        uncommitted: expected.uncommitted,
      });
      expect(registryLoads).to.equal(1);
    });
  }

  it('a fleet.yaml that does not parse fails before any plugin is loaded', async () => {
    await writeFile(join(root, 'fleet.yaml'), `${MANIFEST}colour: blue\n`);
    const failure: unknown = await validateWorkingTree({ root, loadRegistry }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isFleetError(failure) && failure.code).to.equal('FLEET_YAML_INVALID');
    expect(registryLoads).to.equal(0);
  });
});
