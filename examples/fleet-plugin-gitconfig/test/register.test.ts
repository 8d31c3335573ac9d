import { expect } from 'chai';
import { FLEET_PLUGIN_API_VERSION } from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';
import register from '../src/register.js';

// How fleet names this plugin when it is linked: `type: 'link'`, like `fleet plugins link` does.
const plugin = { name: 'fleet-plugin-gitconfig', version: '0.1.0', type: 'link' };

describe('gitconfig plugin: registration', () => {
  it('is accepted by the core registry with no problems', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal(['gitconfig']);
    expect(registry.probers().map((p) => p.descriptor.id)).to.deep.equal(['gitconfig.identity']);
  });

  it('declares ~/.gitconfig as a block file, two host variables and no process coupling', async () => {
    const { descriptor } = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'gitconfig',
    );
    expect(descriptor.files).to.deep.equal([
      {
        id: 'gitconfig',
        path: '~/.gitconfig',
        canonical: 'gitconfig',
        kind: 'block',
        format: 'text',
        markers: { begin: '# fleet:gitconfig:begin', end: '# fleet:gitconfig:end' },
      },
    ]);
    expect(descriptor.hostVariables).to.deep.equal(['git_name', 'git_email']);
    expect(descriptor.coupling).to.deep.equal({ kind: 'none' });
  });

  it('loads its installer, adopter and prober lazily, as plain objects', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    const installer = await registry.installer('gitconfig');
    const adopter = await registry.adopter('gitconfig');
    const prober = await registry.prober('gitconfig.identity');
    expect(installer.domain).to.equal('gitconfig');
    expect(adopter.domain).to.equal('gitconfig');
    expect(prober.layer).to.equal('derived');
    // Plain objects from factory functions: nothing for a host to `instanceof`.
    for (const implementation of [installer, adopter, prober]) {
      expect(Object.getPrototypeOf(implementation)).to.equal(Object.prototype);
    }
  });

  it('is refused, not fatal, next to a plugin that already owns the domain', async () => {
    const registry = await registryFromHooks([
      { plugin: { name: 'a-first-claimant', version: '1.0.0', type: 'core' }, hook: register },
      { plugin, hook: register },
    ]);
    expect(registry.domains()).to.have.length(1);
    expect(registry.problems).to.deep.equal([
      {
        plugin: 'fleet-plugin-gitconfig@0.1.0',
        code: 'PLUGIN_REFUSED',
        message:
          'plugin fleet-plugin-gitconfig@0.1.0 claims domain gitconfig, already owned by plugin a-first-claimant@1.0.0',
      },
    ]);
  });

  it('is refused by a fleet that provides another plugin API version', async () => {
    const registry = await registryFromHooks(
      [{ plugin, hook: register }],
      FLEET_PLUGIN_API_VERSION + 1,
    );
    expect(registry.domains()).to.deep.equal([]);
    expect(registry.problems.map((p) => p.code)).to.deep.equal(['PLUGIN_API_MISMATCH']);
    expect(registry.problems[0]?.message).to.contain(
      `targets fleet plugin API ${FLEET_PLUGIN_API_VERSION}`,
    );
  });
});
