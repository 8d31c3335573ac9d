/**
 * The router plugin's registration, tested the way a third-party plugin tests its own: through
 * @fleet/testkit, which runs the `fleet:register` hook exactly as the CLI and controller do and
 * assembles the registry with the core's own rules.
 */
import { expect } from 'chai';
import { renderDomainForHost } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-router', version: '0.1.0', type: 'core' };

describe('router plugin registration', () => {
  let host: FakeHost;
  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-07' });
  });
  afterEach(() => host.dispose());

  it('is accepted by the core registry with no problems', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal(['router']);
    expect(registry.probers().map((p) => [p.descriptor.id, p.descriptor.layer])).to.deep.equal([
      ['router.volume', 'derived'],
    ]);
  });

  it('owns the config file and the installed volume, coupled as one operation', async () => {
    const router = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'router',
    ).descriptor;
    expect(router.files.map((f) => [f.path, f.kind, f.format])).to.deep.equal([
      ['~/.config/router/router.yaml', 'whole', 'yaml'],
    ]);
    expect(router.derivedPaths?.map((d) => d.path)).to.deep.equal([
      '~/.local/share/router/volume/router.yaml',
    ]);
    expect(router.coupling.kind).to.equal('process');
    // Both owned paths resolve inside the node's home.
    for (const path of [
      '~/.config/router/router.yaml',
      '~/.local/share/router/volume/router.yaml',
    ]) {
      expect(host.resolve(path).startsWith(`${host.home}/`)).to.equal(true);
    }
  });

  it('renders its example for a host, and honours a per-host path override', async () => {
    const router = (await registryFromHooks([{ plugin, hook: register }])).domain(
      'router',
    ).descriptor;
    const examples = new Map(
      (router.examples ?? []).map((e) => [`domains/router/${e.path}`, e.content]),
    );
    const read = (path: string) => examples.get(path) ?? '';
    const [view] = renderDomainForHost(router, host.nodeId, { node_id: host.nodeId }, read);
    expect(view?.content).to.contain('node: node-07\n');
    expect(view?.path).to.equal('~/.config/router/router.yaml');

    const overridden = renderDomainForHost(
      router,
      host.nodeId,
      { node_id: host.nodeId, router_config_path: '~/etc/router.yaml' },
      read,
    );
    expect(overridden[0]?.path).to.equal('~/etc/router.yaml');
  });

  it('loads its installer, adopter and prober lazily, through the registry', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect((await registry.installer('router')).domain).to.equal('router');
    expect((await registry.adopter('router')).domain).to.equal('router');
    expect((await registry.prober('router.volume')).layer).to.equal('derived');
  });
});
