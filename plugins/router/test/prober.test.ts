/**
 * The router's `derived` layer (contract §10.1): the node half reads both files' sha256 through the
 * host's safe reads (`host.files`, the controller's own reader on a fake host), the operator half
 * turns the facts into one drift item.
 */
import { expect } from 'chai';
import { probeParameters, type Prober, type ProbeDesired } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import { routerDomain } from '../src/domain.js';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-router', version: '0.1.0', type: 'core' };
const CONFIG = '~/.config/router/router.yaml';
const VOLUME = '~/.local/share/router/volume/router.yaml';

describe('router.volume prober', () => {
  let host: FakeHost;
  let prober: Prober;
  const parameters = probeParameters(routerDomain, { node_id: 'node-01' }, 'node-01');
  const desired: ProbeDesired = {
    host: 'node-01',
    variables: { node_id: 'node-01' },
    canonicalVersion: '1.0.0',
    parameters,
  };

  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01' });
    host.files = host.writer(routerDomain); // the controller's safe reads of the domain's files
    prober = await (await registryFromHooks([{ plugin, hook: register }])).prober('router.volume');
  });
  afterEach(() => host.dispose());

  async function items() {
    return prober.evaluate(await prober.collect(host, parameters), desired);
  }

  it('is current when the volume equals the config file (and when neither exists yet)', async () => {
    expect((await items()).map((i) => [i.layer, i.path, i.state])).to.deep.equal([
      ['derived', VOLUME, 'current'],
    ]);
    await host.writeFile(CONFIG, 'listen: 1\n');
    await host.writeFile(VOLUME, 'listen: 1\n');
    expect((await items())[0]?.state).to.equal('current');
  });

  it('reports the volume stale when it was edited by hand', async () => {
    await host.writeFile(CONFIG, 'listen: 1\n');
    await host.writeFile(VOLUME, 'listen: 2\n');
    const [item] = await items();
    expect(item).to.include({ layer: 'derived', domain: 'router', path: VOLUME, state: 'stale' });
    expect(item?.detail).to.contain('the installed volume differs from the config file');
  });

  it('reports the volume missing when only the config file exists', async () => {
    await host.writeFile(CONFIG, 'listen: 1\n');
    expect((await items())[0]).to.include({ state: 'missing' });
  });

  it('sends no content off the node: only paths and sha256', async () => {
    await host.writeFile(CONFIG, 'token: canary-1234\n');
    const facts = await prober.collect(host, parameters);
    expect(JSON.stringify(facts)).not.to.contain('canary-1234');
  });

  it('refuses malformed facts rather than guessing', () => {
    expect(() => prober.evaluate({ file: 'x' }, desired)).to.throw(/malformed/);
  });
});
