/**
 * The router's `derived` layer (contract §10.1): the node half reads both files' sha256 through the
 * host's safe reads (`host.files`, the controller's own reader on a fake host), the operator half
 * turns the facts into one drift item.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { probeParameters, type Prober, type ProbeDesired } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import { routerDomain } from '../src/domain.js';
import register from '../src/register.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
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

  /** The host's reads with a record of fleet's writes (the controller's `written.json`). */
  const recording = (written: readonly [path: string, content: string][]) => {
    const reader = host.writer(routerDomain);
    const record = new Set(written.map(([path, content]) => `${path}\u0000${sha256(content)}`));
    host.files = {
      read: (path) => reader.read(path),
      wrote: (path, sha) => Promise.resolve(record.has(`${path}\u0000${sha}`)),
    };
  };

  it('classifies a hand fix in the volume like a hand change in a file: modified, not stale (contract §8.2)', async () => {
    recording([[VOLUME, 'listen: 1\n']]);
    await host.writeFile(CONFIG, 'listen: 1\n');
    await host.writeFile(VOLUME, 'listen: 2\n');
    const [item] = await items();
    expect(item).to.include({
      layer: 'derived',
      domain: 'router',
      path: VOLUME,
      state: 'modified',
    });
    expect(item?.detail)
      .to.contain('equals neither the config file nor any version fleet wrote there')
      .and.contain('--force');
  });

  it('reports the volume stale when it is a version fleet wrote there (the config file moved on)', async () => {
    recording([[VOLUME, 'listen: 1\n']]);
    await host.writeFile(CONFIG, 'listen: 2\n');
    await host.writeFile(VOLUME, 'listen: 1\n');
    const [item] = await items();
    expect(item).to.include({ state: 'stale' });
    expect(item?.detail).to.contain('is a version fleet wrote there');
  });

  it('on a host that keeps no record of its writes, a differing volume stays stale (nothing proven)', async () => {
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
