/**
 * `fleet lab build`'s refusals (docs/runtime-lifecycle.md): each is one line with its stable code
 * and exit code, decided before anything is packed, and leaves the lab repository as it was. The
 * builds themselves (two real `npm pack`s, upgraded and rolled back) run in readme.test.ts.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleet, json } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

describe('fleet lab build: refusals', function () {
  this.timeout(120_000);
  let lab: Lab;
  let head: string;

  before(async () => {
    lab = await Lab.create('fleet-lab-build-');
    await lab.up(1);
    // fleet.yaml lists a version already: the one a second build must not take again
    head = await lab.commitEdit(
      'fleet.yaml',
      (text) =>
        `${text}artifacts:\n  - { version: 0.5.0, file: artifacts/fleet-0.5.0.tgz, sha256: ${'a'.repeat(64)}, commit: ${'b'.repeat(40)} }\n`,
      'an artifact 0.5.0',
    );
  });
  after(async () => {
    await lab?.destroy();
  });

  /** `fleet lab build ARGS --json` (`--dir` the lab unless told otherwise); its error envelope. */
  async function refused(
    args: readonly string[],
    options: { dir?: string | null; fleetRepo?: string } = {},
  ) {
    const dir = options.dir === undefined ? lab.dir : options.dir;
    const run = await fleet(
      ['lab', 'build', ...(dir === null ? [] : ['--dir', dir]), ...args, '--json'],
      {
        cwd: lab.tmp,
        env: options.fleetRepo === undefined ? {} : { FLEET_REPO: options.fleetRepo },
      },
    );
    const { error } = json<{ error: { code: string; message: string; exitCode: number } }>(run);
    expect(run.exitCode, run.stderr).to.equal(error.exitCode);
    expect(error.message).not.to.contain('\n');
    return error;
  }

  const cases: [string, readonly string[], string, number, RegExp][] = [
    [
      'a version fleet.yaml already lists',
      ['--version', '0.5.0'],
      'USAGE',
      2,
      /^fleet\.yaml already lists version 0\.5\.0 \(artifacts\/fleet-0\.5\.0\.tgz\): give another --version$/,
    ],
    [
      'a version that is not semver',
      ['--version', 'next'],
      'USAGE',
      2,
      /"next" is not a semantic version/,
    ],
  ];
  for (const [name, args, code, exit, message] of cases) {
    it(`refuses ${name} (${code}, exit ${exit}) and writes nothing`, async () => {
      const error = await refused(args);
      expect([error.code, error.exitCode]).to.deep.equal([code, exit]);
      expect(error.message).to.match(message);
      expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);
      expect(lab.git('status', '--porcelain')).to.equal('');
    });
  }

  it('refuses a directory that holds no lab (USAGE, exit 2)', async () => {
    const elsewhere = join(lab.tmp, 'not-a-lab');
    await mkdir(elsewhere, { recursive: true });
    const error = await refused(['--version', '0.6.0'], { dir: elsewhere });
    expect([error.code, error.exitCode]).to.deep.equal(['USAGE', 2]);
    expect(error.message).to.match(
      /not-a-lab holds no lab \(no lab\.json\): start one with fleet lab up --dir /,
    );
  });

  it("without --dir, refuses a $FLEET_REPO that is not a lab's repository (USAGE, exit 2)", async () => {
    const other = join(lab.tmp, 'other-fleet');
    const init = await fleet(['init', other], { cwd: lab.tmp });
    expect(init.exitCode, init.stderr).to.equal(0);
    const error = await refused(['--version', '0.6.0'], { dir: null, fleetRepo: other });
    expect([error.code, error.exitCode]).to.deep.equal(['USAGE', 2]);
    expect(error.message).to.match(
      /^\$FLEET_REPO is .*other-fleet, which is not a lab's repository .*: lab build writes only into a lab; name one with --dir$/,
    );
  });

  it('without --dir, builds into the lab whose repository $FLEET_REPO is', async () => {
    // the lab is found: its fleet.yaml is what refuses the listed version
    const error = await refused(['--version', '0.5.0'], { dir: null, fleetRepo: lab.repo });
    expect(error.message).to.match(/^fleet\.yaml already lists version 0\.5\.0/);
  });

  it('refuses a fleet.yaml with uncommitted changes (REPO_DIRTY, exit 3): the commit would take them along', async () => {
    const manifest = join(lab.repo, 'fleet.yaml');
    const text = await readFile(manifest, 'utf8');
    await writeFile(manifest, `${text}# a hand edit\n`);
    try {
      const error = await refused(['--version', '0.6.0']);
      expect([error.code, error.exitCode]).to.deep.equal(['REPO_DIRTY', 3]);
      expect(error.message).to.match(
        /fleet\.yaml has uncommitted changes: commit or discard them first/,
      );
      expect(lab.git('rev-parse', 'HEAD').trim()).to.equal(head);
    } finally {
      await writeFile(manifest, text);
    }
  });
});
