/**
 * `fleet plugins new`'s last lines (docs/plugin-authoring.md, "The shortest path"): the next
 * commands, as the author can type them whether or not fleet's packages are on a registry.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { UNSET_FLEET_REGISTRY } from '@fleet/core';
import { OFFLINE_TARBALLS, nextSteps } from '../src/plugins/new.js';

describe('plugins new: the next steps it prints', () => {
  const root = '/home/dev/fleet-plugin-gitini';

  it('with a registry named: install from it, test, link (the lockfile lets link install again)', () => {
    expect(nextSteps(root, 'https://npm.example.org/', UNSET_FLEET_REGISTRY)).to.deep.equal([
      `Next: cd ${root} && npm install && npm test && fleet plugins link .`,
    ]);
  });

  it('with none: says why a plain npm install fails, then the offline install and link --no-install', () => {
    const lines = nextSteps(root, UNSET_FLEET_REGISTRY, UNSET_FLEET_REGISTRY);
    expect(lines).to.have.length(2);
    expect(lines[0]).to.contain(`@fleet is bound to ${UNSET_FLEET_REGISTRY}`);
    expect(lines[0]).to.contain('a plain npm install fails');
    expect(lines[0]).to.contain(
      'npm pack -w packages/core -w packages/controller -w packages/testkit',
    );
    expect(lines[1]).to.equal(
      `Next: cd ${root} && npm install --no-save --fetch-retries=0 ${OFFLINE_TARBALLS} && npm test && fleet plugins link . --no-install`,
    );
  });

  it('the offline command is the one docs/plugin-authoring.md gives', async () => {
    const root = fileURLToPath(new URL('../../../..', import.meta.url)); // from dist/test/
    const doc = await readFile(join(root, 'docs', 'plugin-authoring.md'), 'utf8');
    expect(doc).to.contain(`npm install --no-save --fetch-retries=0 ${OFFLINE_TARBALLS}`);
    expect(doc).to.contain('fleet plugins link . --no-install');
  });
});
