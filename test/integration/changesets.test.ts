/**
 * The release notes in .changeset/ (.changeset/README.md) must assemble into a release plan: that
 * is what `changeset status` and `changeset version` do first, and one bad file stops both for
 * every package. changesets treats private packages (the gitconfig example, the integration tests)
 * as ignored, and refuses a changeset that names an ignored package beside a published one.
 */
import getReleasePlan from '@changesets/get-release-plan';
import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../src/fleet.js';

describe('the changesets in .changeset/', () => {
  it('assemble into a release plan that plans a release for every package they name', async () => {
    const plan = await getReleasePlan(ROOT);
    expect(plan.changesets.length).to.be.greaterThan(0);
    for (const changeset of plan.changesets) {
      for (const release of changeset.releases) {
        const planned = plan.releases.find((r) => r.name === release.name);
        expect(planned, `${changeset.id}.md names ${release.name}`).to.not.equal(undefined);
      }
    }
  });

  it('refuses a changeset that names a private package beside a published one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-changesets-'));
    try {
      const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
      await writeFile(
        join(dir, 'package.json'),
        json({ name: 'root', private: true, workspaces: ['packages/*'] }),
      );
      for (const [name, isPrivate] of [
        ['published', false],
        ['example', true],
      ] as const) {
        await mkdir(join(dir, 'packages', name), { recursive: true });
        await writeFile(
          join(dir, 'packages', name, 'package.json'),
          json({ name, version: '0.1.0', ...(isPrivate ? { private: true } : {}) }),
        );
      }
      await mkdir(join(dir, '.changeset'));
      // The repository's own settings, but for the ignore list, whose packages are not here.
      const config = JSON.parse(
        await readFile(join(ROOT, '.changeset', 'config.json'), 'utf8'),
      ) as Record<string, unknown>;
      await writeFile(join(dir, '.changeset', 'config.json'), json({ ...config, ignore: [] }));
      await writeFile(
        join(dir, '.changeset', 'mixed.md'),
        "---\n'published': minor\n'example': patch\n---\n\nBoth at once.\n",
      );
      await getReleasePlan(dir).then(
        () => expect.fail('a mixed changeset was accepted'),
        (error: unknown) => expect(String(error)).to.match(/Mixed changesets/),
      );
      await writeFile(
        join(dir, '.changeset', 'mixed.md'),
        "---\n'published': minor\n---\n\nThe published one only.\n",
      );
      const plan = await getReleasePlan(dir);
      expect(plan.releases.map((r) => [r.name, r.type])).to.deep.equal([['published', 'minor']]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
