/**
 * Provenance you can check (contract §1.8, §3 `artifacts`): a runtime artifact carries the commit
 * it was built from (`package/fleet-build.json`), and `validate`, `bootstrap plan` and `upgrade`
 * refuse a fleet.yaml `commit` that differs from it — exit 2, one line naming both — before
 * anything reaches the node. (That a real `npm pack` writes the record is in
 * test/e2e/runtime-artifact.test.ts; that acceptance holds the runtime's reported commit
 * against the artifact's is in test/e2e/runtime-lab.test.ts.)
 */
import { access, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  FAKE_ARTIFACT_COMMIT,
  fakeRuntimeArtifact,
  type FakeArtifactOptions,
} from '@fleet/testkit';
import { json } from '../src/fleet.js';
import { Lab, sha256 } from './lab-fixture.js';

const OTHER = 'deadbeef'.repeat(5);

describe('artifact provenance: fleet.yaml commit against the artifact’s own', function () {
  this.timeout(300_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-provenance-e2e-');
    await lab.up(1);
  });
  after(async () => lab?.destroy());

  /** Lists a fake artifact as the canonical one with `commit` recorded for it, and commits. */
  async function listArtifact(
    name: string,
    options: FakeArtifactOptions,
    commit: string,
  ): Promise<string> {
    const bytes = fakeRuntimeArtifact({ version: '0.0.1', salt: name, ...options });
    const file = `artifacts/${name}.tgz`;
    await mkdir(join(lab.repo, 'artifacts'), { recursive: true });
    await writeFile(join(lab.repo, file), bytes);
    await lab.commitEdit(
      'fleet.yaml',
      (text) =>
        `${text
          .replace(/^canonicalVersion: .*$/m, 'canonicalVersion: 0.0.1')
          .replace(
            /^artifacts:.*\n(?: {2}- .*\n(?: {4}.*\n)*)*/m,
            '',
          )}artifacts:\n  - version: 0.0.1\n    file: ${file}\n    sha256: ${sha256(bytes)}\n    commit: ${commit}\n`,
      `list ${name}`,
    );
    return file;
  }

  const journal = () =>
    join(lab.home('node-01'), '.local', 'state', 'fleet', 'journal', 'runtime.jsonl');
  const exists = (path: string) =>
    access(path).then(
      () => true,
      () => false,
    );

  it('validate, bootstrap plan and upgrade refuse a commit the artifact was not built from (exit 2)', async () => {
    const file = await listArtifact('mismatch', {}, OTHER);
    const both = new RegExp(
      `fleet\\.yaml records commit ${OTHER} for ${file}, but the artifact was built from ${FAKE_ARTIFACT_COMMIT}`,
    );
    const validate = await lab.run(['validate', '--json']);
    expect(validate.exitCode, validate.stderr).to.equal(2);
    const problems = json<{
      error: { code: string; problems: { path: string; message: string }[] };
    }>(validate).error;
    expect(problems.code).to.equal('REPO_INVALID');
    expect(problems.problems.find((p) => p.path === 'artifacts.0.commit')?.message).to.match(both);

    const plan = await lab.run(['bootstrap', 'plan', 'node-01']);
    expect(plan.exitCode, plan.stderr).to.equal(2);
    expect(plan.stderr.trim().split('\n')[0]).to.match(both);

    const upgrade = await lab.run(['upgrade', 'node-01', '--confirm', '--json']);
    expect(upgrade.exitCode, upgrade.stderr).to.equal(2);
    const error = json<{ error: { code: string; message: string } }>(upgrade).error;
    expect(error.code).to.equal('ARTIFACT_PROVENANCE');
    expect(error.message).to.match(both);
    expect(await exists(journal()), 'nothing reached the node').to.equal(false);
  });

  it('refuses an artifact that carries no build record, whatever fleet.yaml says', async () => {
    const file = await listArtifact('unrecorded', { build: null }, FAKE_ARTIFACT_COMMIT);
    for (const args of [
      ['validate'],
      ['bootstrap', 'plan', 'node-01'],
      ['upgrade', 'node-01', '--confirm'],
    ]) {
      const run = await lab.run(args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).to.equal(2);
      expect(run.stderr).to.include(`${file} carries no build record (package/fleet-build.json)`);
    }
    // --artifact FILE outside fleet.yaml: the same refusal
    const outside = join(lab.tmp, 'outside.tgz');
    await copyFile(join(lab.repo, file), outside);
    const plan = await lab.run(['bootstrap', 'plan', 'node-01', '--artifact', outside]);
    expect(plan.exitCode, plan.stderr).to.equal(2);
    expect(plan.stderr).to.include('carries no build record');
    expect(await exists(journal())).to.equal(false);
  });

  it('names a build from a dirty tree <commit>-dirty: refused as plain <commit>, warned about when fleet.yaml says so', async () => {
    const dirty = { build: { commit: FAKE_ARTIFACT_COMMIT, dirty: true } };
    await listArtifact('dirty', dirty, FAKE_ARTIFACT_COMMIT);
    const refused = await lab.run(['validate']);
    expect(refused.exitCode, refused.stderr).to.equal(2);
    expect(refused.stderr).to.include(`built from ${FAKE_ARTIFACT_COMMIT}-dirty`);

    await listArtifact('dirty-named', dirty, `${FAKE_ARTIFACT_COMMIT}-dirty`);
    const validate = await lab.run(['validate']);
    expect(validate.exitCode, validate.stderr).to.equal(0);
    const plan = await lab.run(['bootstrap', 'plan', 'node-01', '--json']);
    expect(plan.exitCode, plan.stderr).to.equal(0);
    expect(plan.stderr).to.match(/built from a tree with uncommitted changes/);
    expect(json<{ artifact: { commit: string } }>(plan).artifact.commit).to.equal(
      `${FAKE_ARTIFACT_COMMIT}-dirty`,
    );
  });
});
