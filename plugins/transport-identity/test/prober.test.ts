/**
 * The `runtime` layer of transport-identity: the identity file's expected_node, the running
 * controller's --node-id (the fake host's `nodeId`) and the repo's node_id must agree.
 */
import { expect } from 'chai';
import { probeParameters, type Prober, type ProbeDesired } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import { transportIdentityDomain } from '../src/domain.js';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-transport-identity', version: '0.1.0', type: 'core' };
const IDENTITY = '~/.config/fleet/transport.yaml';

describe('transport-identity.node-id prober', () => {
  let host: FakeHost;
  let prober: Prober;
  const parameters = probeParameters(transportIdentityDomain, { node_id: 'node-01' }, 'node-01');
  const desired = (repo: string): ProbeDesired => ({
    host: 'node-01',
    variables: { node_id: repo },
    canonicalVersion: '1.0.0',
    parameters,
  });

  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01' }); // the running controller's --node-id
    host.files = host.writer(transportIdentityDomain);
    prober = await (
      await registryFromHooks([{ plugin, hook: register }])
    ).prober('transport-identity.node-id');
  });
  afterEach(() => host.dispose());

  async function item(repo: string) {
    const [only] = prober.evaluate(await prober.collect(host, parameters), desired(repo));
    return only;
  }

  it('is current when the file, the running flag and the repo agree', async () => {
    await host.writeFile(IDENTITY, 'expected_node: node-01\n');
    expect(await item('node-01')).to.include({
      layer: 'runtime',
      path: IDENTITY,
      state: 'current',
    });
  });

  it('is stale when the node is consistent but the repo names another id', async () => {
    await host.writeFile(IDENTITY, 'expected_node: node-01\n');
    const found = await item('node-09');
    expect(found).to.include({ state: 'stale' });
    expect(found?.detail).to.contain("the repo's node_id is node-09");
  });

  it('is diverged when the file and the running flag disagree (the next start would refuse)', async () => {
    await host.writeFile(IDENTITY, 'expected_node: node-07\n');
    const found = await item('node-01');
    expect(found).to.include({ state: 'diverged' });
    expect(found?.detail).to.contain(
      'expected_node node-07 disagrees with the running --node-id node-01',
    );
  });

  it('without an identity file compares the running flag with the repo', async () => {
    expect(await item('node-01')).to.include({ state: 'current' });
    expect(await item('node-02')).to.include({ state: 'stale' });
  });

  it('reports an unreadable identity file', async () => {
    await host.writeFile(IDENTITY, 'expected_node: [\n');
    expect(await item('node-01')).to.include({ state: 'diverged' });
  });

  it('reads the file again at every probe: a changed file is seen, though parses are remembered', async () => {
    for (const [text, state] of [
      ['expected_node: node-01\n', 'current'],
      ['expected_node: node-07\n', 'diverged'],
      ['expected_node: node-01\n', 'current'],
      ['expected_node: [\n', 'diverged'],
      ['expected_node: node-01\n', 'current'],
    ] as const) {
      await host.writeFile(IDENTITY, text);
      expect(await item('node-01'), text).to.include({ state });
    }
  });
});
