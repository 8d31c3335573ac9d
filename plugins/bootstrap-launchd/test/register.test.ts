import { expect } from 'chai';
import { registryFromHooks } from '@fleet/testkit';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-bootstrap-launchd', version: '0.1.0', type: 'core' };

describe('bootstrap-launchd plugin registration', () => {
  it('registers the launchd adapter for darwin and its runtime prober, and no domain', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains()).to.deep.equal([]);
    expect(
      registry.bootstrapAdapters().map((a) => [a.descriptor.supervisor, a.descriptor.platforms]),
    ).to.deep.equal([['launchd', ['darwin']]]);
    expect(registry.probers().map((p) => [p.descriptor.id, p.descriptor.layer])).to.deep.equal([
      ['launchd.agents', 'runtime'],
    ]);
  });

  it('loads the adapter and the prober lazily, implementing the contract', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    const adapter = await registry.bootstrapAdapter('launchd');
    expect([adapter.supervisor, adapter.pointer, [...adapter.platforms]]).to.deep.equal([
      'launchd',
      'symlink',
      ['darwin'],
    ]);
    const prober = await registry.prober('launchd.agents');
    expect([prober.id, prober.layer]).to.deep.equal(['launchd.agents', 'runtime']);
  });
});
