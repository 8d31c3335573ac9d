/**
 * The runtime lifecycle end to end on a lab host (contract §11, §12, §13): the lab supervisor driven
 * through the `lab` bootstrap adapter, a tarball made by `npm pack -w packages/cli`, and the
 * operator's real CLI — `bootstrap plan|apply|status|rollback` and `upgrade`, as the README shows.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { FAKE_ARTIFACT_COMMIT, fakeRuntimeArtifact } from '@fleet/testkit';
import { packedRuntimeArtifact, repackedArtifact, type RuntimeArtifact } from '../src/artifact.js';
import { json, tempDir } from '../src/fleet.js';
import { Lab, sha256 } from './lab-fixture.js';

describe('runtime lifecycle on a lab host (bootstrap, upgrade, rollback through the CLI)', function () {
  this.timeout(900_000);
  let lab: Lab;
  let artifact: RuntimeArtifact;
  let scratch: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    artifact = await packedRuntimeArtifact();
    scratch = await tempDir('fleet-runtime-lab-');
    lab = await Lab.create('fleet-runtime-e2e-');
    await lab.up(1);
  });
  after(async () => {
    await lab?.destroy();
    await scratch?.cleanup();
  });

  /** Lists `file` in fleet.yaml as the canonical artifact and commits. */
  async function makeCanonical(file: string, version: string, commit: string): Promise<void> {
    const bytes = await readFile(file);
    const name = `artifacts/fleet-${version}.tgz`;
    await mkdir(join(lab.repo, 'artifacts'), { recursive: true });
    await copyFile(file, join(lab.repo, name));
    await lab.commitEdit(
      'fleet.yaml',
      (text) => {
        const withVersion = text.replace(/^canonicalVersion: .*$/m, `canonicalVersion: ${version}`);
        const entry = `  - version: ${version}\n    file: ${name}\n    sha256: ${sha256(bytes)}\n    commit: ${commit}\n    signature: ${lab.signature(file)}\n`;
        return /^artifacts:/m.test(withVersion)
          ? withVersion.replace(/^artifacts:.*\n/m, (line) => `${line.replace(' []', '')}${entry}`)
          : `${withVersion}artifacts:\n${entry}`;
      },
      `artifact ${version}`,
    );
  }

  it('plans, refuses an edited plan, applies a bootstrap, upgrades, rolls back and reports', async () => {
    // fleet.yaml records the commit the artifact was built from (its build record), not the fleet
    // repository's own HEAD
    await makeCanonical(artifact.path, artifact.version, artifact.commit);

    // plan: read-only, bound to everything, its id the hash of its canonical form
    const planFile = join(scratch.path, 'node-01.plan.json');
    const planned = await lab.run(['bootstrap', 'plan', 'node-01', '--out', planFile, '--json']);
    expect(planned.exitCode, planned.stderr).to.equal(0);
    const plan = json<{
      id: string;
      route: string;
      prior: { build: string | null };
      artifact: { sha256: string };
    }>(planned);
    expect(plan.route).to.equal('controller');
    expect(plan.prior.build).to.equal(null); // the lab runs a development build
    expect(plan.artifact.sha256).to.equal(artifact.sha256);

    // nothing accepted yet, so nothing to roll back to: a precondition (exit 3), not a verification
    const early = await lab.run(['bootstrap', 'rollback', 'node-01', '--confirm', '--json']);
    expect(early.exitCode, early.stderr).to.equal(3);
    expect(json<{ error: { code: string } }>(early).error.code).to.equal('NO_PRIOR_GENERATION');

    // without --confirm: the plan, exit 2, nothing done
    const unconfirmed = await lab.run(['bootstrap', 'apply', planFile]);
    expect(unconfirmed.exitCode, unconfirmed.stderr).to.equal(2);

    // an edited plan: exit 3, nothing done
    const edited = join(scratch.path, 'edited.plan.json');
    await writeFile(edited, (await readFile(planFile, 'utf8')).replace('"node-01"', '"node-02"'));
    const refused = await lab.run(['bootstrap', 'apply', edited, '--confirm']);
    expect(refused.exitCode, refused.stderr).to.equal(3);
    expect(refused.stderr).to.match(/edited after it was planned/);

    // apply: through the controller, accepted
    const applied = await lab.run(['bootstrap', 'apply', planFile, '--confirm', '--json']);
    expect(applied.exitCode, applied.stderr).to.equal(0);
    expect(json<{ outcome: string }>(applied).outcome).to.equal('accepted');
    const version = await lab.run(['version', '--json']);
    expect(version.stdout).to.contain(artifact.sha256);

    // the same plan again: the prior changed, so it is refused (exit 3)
    const stale = await lab.run(['bootstrap', 'apply', planFile, '--confirm']);
    expect(stale.exitCode, stale.stderr).to.equal(3);
    expect(stale.stderr).to.match(/the plan changed .*prior/);

    // upgrade to the canonical version it already runs: a precondition that does not hold (exit 3)
    const current = await lab.run(['upgrade', 'node-01', '--confirm']);
    expect(current.exitCode, current.stderr).to.equal(3);
    expect(current.stderr).to.match(/nothing to upgrade/);

    // a second real build: upgraded and accepted
    const second = (await repackedArtifact(artifact, `${artifact.version}-lab.2`, scratch.path))
      .path;
    await makeCanonical(second, `${artifact.version}-lab.2`, artifact.commit);
    const upgraded = await lab.run(['upgrade', 'node-01', '--confirm', '--json']);
    expect(upgraded.exitCode, upgraded.stderr).to.equal(0);
    expect(json<{ outcome: string }>(upgraded).outcome).to.equal('accepted');

    // a build that reports a wrong node id: rolled back to the second build, verified (exit 6)
    const liar = join(scratch.path, 'liar.tgz');
    await writeFile(
      liar,
      fakeRuntimeArtifact({ version: '0.0.0-liar', lie: { nodeId: 'node-99' } }),
    );
    await makeCanonical(liar, '0.0.0-liar', FAKE_ARTIFACT_COMMIT);
    const rejected = await lab.run([
      'upgrade',
      'node-01',
      '--confirm',
      '--acceptance-timeout',
      '20',
    ]);
    expect(rejected.exitCode, rejected.stderr).to.equal(6);
    expect(rejected.stderr).to.match(/rolled back/);
    expect(rejected.stderr).to.match(/node-id: expected node-01, got node-99/);

    // a build that reports another commit than the one its artifact carries: rolled back (exit 6)
    const otherCommit = 'c0ffee'.repeat(6) + 'c0ff';
    const commitLiar = join(scratch.path, 'commit-liar.tgz');
    await writeFile(
      commitLiar,
      fakeRuntimeArtifact({ version: '0.0.0-commit-liar', lie: { commit: otherCommit } }),
    );
    await makeCanonical(commitLiar, '0.0.0-commit-liar', FAKE_ARTIFACT_COMMIT);
    const misreported = await lab.run([
      'upgrade',
      'node-01',
      '--confirm',
      '--acceptance-timeout',
      '20',
    ]);
    expect(misreported.exitCode, misreported.stderr).to.equal(6);
    expect(misreported.stderr).to.match(/rolled back/);
    expect(misreported.stderr).to.include(
      `build-commit: expected ${FAKE_ARTIFACT_COMMIT}, got ${otherCommit}`,
    );

    const status = await lab.run(['bootstrap', 'status', 'node-01', '--json']);
    expect(status.exitCode, status.stderr).to.equal(0);
    const observed = json<{ status: { state: string; observed: { live: string } } }>(status);
    expect(observed.status.state).to.equal('rolled-back');
    expect(observed.status.observed.live).to.equal(sha256(await readFile(second)));

    // rollback on request: back to the first build, verified
    const back = await lab.run(['bootstrap', 'rollback', 'node-01', '--confirm', '--json']);
    expect(back.exitCode, back.stderr).to.equal(0);
    const after = await lab.run(['bootstrap', 'status', 'node-01', '--json']);
    const final = json<{ status: { state: string; observed: { live: string; pointer: string } } }>(
      after,
    );
    expect(final.status.state).to.equal('rolled-back');
    expect(final.status.observed.live).to.equal(artifact.sha256);
    expect(final.status.observed.pointer).to.equal(artifact.sha256);

    // the audit chain still verifies, with the runtime operations in it
    const audit = await lab.run(['audit', 'verify', '--json']);
    expect(audit.exitCode, audit.stderr).to.equal(0);
  });
});
