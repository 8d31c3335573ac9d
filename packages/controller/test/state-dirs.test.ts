/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client. */
/**
 * The node's own directories are opened without following a symbolic link at any component
 * (contract §15; issue 11 finding 4): a link planted in place of `~/.local/state/fleet`,
 * `backups`, `backups/<domain>`, `journal`, `operations`, the token store or
 * `~/.local/share/fleet/runtime` is refused (`PATH_OUTSIDE_ROOT`), the refusal audited where the
 * audit log can be reached, and nothing appears at the link's target.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { createController } from '../src/index.js';
import { stageGeneration } from '../src/generations/generation.js';
import { sha256Hex } from '../src/generations/tree.js';
import { statePaths } from '../src/state-paths.js';
import { TokenStore } from '../src/tokens/store.js';
import { systemClock } from '../src/context.js';
import { APP } from './support/fixture-registry.js';
import { fixtureRegistry } from './support/fixture-registry.js';
import { install } from './support/install.js';
import { startNode, type TestNode } from './support/node.js';
import { makeTgz, runtimePackage } from './support/tar.js';

const STATE = '.local/state/fleet';

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    expect(isFleetError(error), String(error)).to.equal(true);
    return error as { code: string; message: string };
  }
  throw new Error('expected a refusal');
}

const auditLines = async (home: string) =>
  (await readFile(join(home, STATE, 'audit.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { operation: string; code: string | null; detail: string });

describe('state directories: a planted symbolic link is refused at every component', () => {
  const dirs: string[] = [];
  let outside: string;
  let home: string;
  const newHome = async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-statedir-'));
    outside = await mkdtemp(join(tmpdir(), 'fleet-outside-'));
    dirs.push(home, outside);
  };
  const start = () => createController({ home, nodeId: 'node-01', registry: fixtureRegistryP });
  let fixtureRegistryP: Awaited<ReturnType<typeof fixtureRegistry>>;
  before(async () => {
    fixtureRegistryP = await fixtureRegistry();
  });
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  for (const name of ['backups', 'journal', 'operations']) {
    it(`~/${STATE}/${name} -> outside: the controller does not start (PATH_OUTSIDE_ROOT), audited, nothing written there`, async () => {
      await newHome();
      await mkdir(join(home, STATE), { recursive: true, mode: 0o700 });
      await symlink(outside, join(home, STATE, name));
      const error = await refusal(start());
      expect(error.code).to.equal('PATH_OUTSIDE_ROOT');
      expect(error.message).to.contain(name);
      expect(await readdir(outside)).to.deep.equal([]);
      const last = (await auditLines(home)).at(-1);
      expect(last).to.include({ operation: 'start', code: 'PATH_OUTSIDE_ROOT' });
    });
  }

  it(`~/${STATE} itself -> outside: refused before anything is written (no audit log to write to)`, async () => {
    await newHome();
    await mkdir(join(home, '.local/state'), { recursive: true, mode: 0o700 });
    await symlink(outside, join(home, STATE));
    expect((await refusal(start())).code).to.equal('PATH_OUTSIDE_ROOT');
    expect(await readdir(outside)).to.deep.equal([]);
  });

  it('~/.local -> outside: refused the same way (every component, not only the last)', async () => {
    await newHome();
    await symlink(outside, join(home, '.local'));
    expect((await refusal(start())).code).to.equal('PATH_OUTSIDE_ROOT');
    expect(await readdir(outside)).to.deep.equal([]);
  });

  describe('planted while the controller runs', () => {
    let node: TestNode;
    let token: string;
    beforeEach(async () => {
      node = await startNode();
      token = await node.issue(['config:read', 'config:install']);
      outside = await mkdtemp(join(tmpdir(), 'fleet-outside-'));
      dirs.push(outside);
      await node.write(APP, `api_key=${node.canary}\n`);
    });
    afterEach(async () => node.dispose());

    const backups = () => join(node.home, STATE, 'backups');

    it('backups -> outside: the install is refused (PATH_OUTSIDE_ROOT), audited, the live file untouched, no backup outside', async () => {
      await rm(backups(), { recursive: true });
      await symlink(outside, backups());
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'api_key=rotated-away\n' },
      ]);
      expect(answer.status).to.equal(403);
      expect(answer.body.error.code).to.equal('PATH_OUTSIDE_ROOT');
      expect(await readFile(node.abs(APP), 'utf8')).to.equal(`api_key=${node.canary}\n`);
      expect(await readdir(outside)).to.deep.equal([]);
      const last = (await auditLines(node.home)).at(-1);
      expect(last).to.include({ operation: 'install', code: 'PATH_OUTSIDE_ROOT' });
      // Reads of backups are refused too, never listed through the link.
      const snapshot = await node.call('/v1/snapshot', {
        token,
        body: { files: [{ domain: 'fixture', path: APP }], backups: true },
      });
      expect(snapshot.body.files[0].state).to.equal('refused');
      expect(snapshot.body.files[0].code).to.equal('PATH_OUTSIDE_ROOT');
    });

    it('backups/<domain> -> outside: refused the same way', async () => {
      await mkdir(backups(), { recursive: true, mode: 0o700 });
      await symlink(outside, join(backups(), 'fixture'));
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'api_key=rotated-away\n' },
      ]);
      expect(answer.body.error.code).to.equal('PATH_OUTSIDE_ROOT');
      expect(await readdir(outside)).to.deep.equal([]);
    });

    it('journal -> outside: the install is refused before its journal is created there', async () => {
      const journal = join(node.home, STATE, 'journal');
      await rm(journal, { recursive: true });
      await symlink(outside, journal);
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'api_key=rotated-away\n' },
      ]);
      expect(answer.body.error.code).to.equal('PATH_OUTSIDE_ROOT');
      expect(await readdir(outside)).to.deep.equal([]);
      expect(await readFile(node.abs(APP), 'utf8')).to.equal(`api_key=${node.canary}\n`);
    });

    it('operations -> outside: no operation record is written there', async () => {
      const operations = join(node.home, STATE, 'operations');
      await rm(operations, { recursive: true });
      await symlink(outside, operations);
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'api_key=rotated-away\n' },
      ]);
      expect(await readdir(outside)).to.deep.equal([]);
      // The install was done and audited before its record was refused: the answer is its own
      // (catalogue 25), and the journal, which holds the outcome, stays for the next start.
      expect(answer.status, answer.text).to.equal(200);
      const journal = join(node.home, STATE, 'journal', `${answer.body.operationId}.jsonl`);
      expect(await readFile(journal, 'utf8')).to.contain('"event":"outcome"');
    });
  });

  it('the token store: a planted state root is refused', async () => {
    await newHome();
    await mkdir(join(home, '.local/state'), { recursive: true, mode: 0o700 });
    await symlink(outside, join(home, STATE));
    const error = await refusal(
      new TokenStore(statePaths(home), systemClock).issue({ client: 't', scopes: ['config:read'] }),
    );
    expect(error.code).to.equal('PATH_OUTSIDE_ROOT');
    expect(await readdir(outside)).to.deep.equal([]);
  });

  it('~/.local/share/fleet/runtime -> outside: staging a generation is refused, nothing staged there', async () => {
    await newHome();
    const data = makeTgz(runtimePackage());
    const artifact = join(outside, '..', `${outside.split('/').pop() ?? 'x'}.tgz`);
    await writeFile(artifact, data);
    dirs.push(artifact);
    await mkdir(join(home, '.local/share/fleet'), { recursive: true, mode: 0o700 });
    await symlink(outside, join(home, '.local/share/fleet/runtime'));
    const error = await refusal(
      stageGeneration({ home, platform: 'linux', artifact, sha256: sha256Hex(data) }),
    );
    expect(error.code).to.equal('PATH_OUTSIDE_ROOT');
    expect(await readdir(outside)).to.deep.equal([]);
  });
});
