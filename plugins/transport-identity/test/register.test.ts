import { expect } from 'chai';
import { renderDomainForHost } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-transport-identity', version: '0.1.0', type: 'core' };

describe('transport-identity plugin registration', () => {
  let host: FakeHost;
  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-03' });
  });
  afterEach(() => host.dispose());

  it('is accepted by the core registry with no problems', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal([
      'transport-identity',
    ]);
    expect(registry.probers().map((p) => p.descriptor.layer)).to.deep.equal(['runtime']);
  });

  it('couples the identity file to restarting the controller with the matching --node-id', async () => {
    const domain = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'transport-identity',
    ).descriptor;
    expect(domain.files.map((f) => f.path)).to.deep.equal(['~/.config/fleet/transport.yaml']);
    expect(domain.hostVariables).to.deep.equal(['node_id']);
    expect(
      domain.coupling.kind === 'process' && domain.coupling.actions.map((a) => a.kind),
    ).to.deep.equal(['update-supervisor-flag', 'restart-controller', 'verify-node-id']);
  });

  it('loads its installer and prober lazily, through the registry', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect((await registry.installer('transport-identity')).domain).to.equal('transport-identity');
    expect((await registry.prober('transport-identity.node-id')).layer).to.equal('runtime');
  });

  it("renders expected_node from the host's node_id", async () => {
    const domain = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'transport-identity',
    ).descriptor;
    const example = domain.examples?.[0]?.content ?? '';
    const [view] = renderDomainForHost(
      domain,
      host.nodeId,
      { node_id: host.nodeId },
      () => example,
    );
    expect(view?.content).to.match(/^expected_node: node-03$/m);
  });

  it('fails the render when the host has no node_id, naming the file and the variable', async () => {
    const domain = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'transport-identity',
    ).descriptor;
    const example = domain.examples?.[0]?.content ?? '';
    expect(() => renderDomainForHost(domain, 'node-03', {}, () => example)).to.throw(
      /transport\.yaml.*node_id is not set in hosts\/node-03\.yaml/,
    );
  });
});
