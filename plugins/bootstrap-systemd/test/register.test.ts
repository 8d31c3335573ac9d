import { expect } from 'chai';
import { registryFromHooks } from '@fleet/testkit';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-bootstrap-systemd', version: '0.1.0', type: 'core' };

describe('bootstrap-systemd plugin registration', () => {
  it('registers the systemd-user adapter for linux and its runtime prober, and no domain', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains()).to.deep.equal([]);
    expect(
      registry.bootstrapAdapters().map((a) => [a.descriptor.supervisor, a.descriptor.platforms]),
    ).to.deep.equal([['systemd-user', ['linux']]]);
    expect(registry.probers().map((p) => [p.descriptor.id, p.descriptor.layer])).to.deep.equal([
      ['systemd-user.unit', 'runtime'],
    ]);
  });

  it('refuses a second plugin claiming the same supervisor, keeping the bundled one', async () => {
    const impostor = { name: 'fleet-plugin-impostor', version: '9.9.9', type: 'user' };
    const registry = await registryFromHooks([
      { plugin: impostor, hook: register },
      { plugin, hook: register },
    ]);
    expect(registry.bootstrapAdapters().map((a) => a.plugin.name)).to.deep.equal([plugin.name]);
    expect(registry.problems.map((p) => p.plugin)).to.deep.equal(['fleet-plugin-impostor@9.9.9']);
    expect(registry.problems[0]?.message).to.contain(
      'already owned by plugin @fleet/plugin-bootstrap-systemd@0.1.0',
    );
  });

  it('loads the adapter and the prober lazily, implementing the contract', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    const adapter = await registry.bootstrapAdapter('systemd-user');
    expect([adapter.supervisor, adapter.pointer, [...adapter.platforms]]).to.deep.equal([
      'systemd-user',
      'symlink',
      ['linux'],
    ]);
    const prober = await registry.prober('systemd-user.unit');
    expect([prober.id, prober.layer]).to.deep.equal(['systemd-user.unit', 'runtime']);
  });
});
