import { expect } from 'chai';
import { registryFromHooks } from '@fleet/testkit';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-bootstrap-windows', version: '0.1.0', type: 'core' };

describe('bootstrap-windows plugin registration', () => {
  it('registers the windows-task adapter for win32 and its runtime prober, and no domain', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains()).to.deep.equal([]);
    expect(
      registry.bootstrapAdapters().map((a) => [a.descriptor.supervisor, a.descriptor.platforms]),
    ).to.deep.equal([['windows-task', ['win32']]]);
    expect(registry.probers().map((p) => [p.descriptor.id, p.descriptor.layer])).to.deep.equal([
      ['windows-task.task', 'runtime'],
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
      'already owned by plugin @fleet/plugin-bootstrap-windows@0.1.0',
    );
  });

  it('loads the adapter and the prober lazily, implementing the contract', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    const adapter = await registry.bootstrapAdapter('windows-task');
    expect([adapter.supervisor, adapter.pointer, [...adapter.platforms]]).to.deep.equal([
      'windows-task',
      'file',
      ['win32'],
    ]);
    const prober = await registry.prober('windows-task.task');
    expect([prober.id, prober.layer]).to.deep.equal(['windows-task.task', 'runtime']);
  });
});
