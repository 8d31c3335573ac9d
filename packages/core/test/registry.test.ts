import { expect } from 'chai';
import { FLEET_PLUGIN_API_VERSION } from '../src/api-version.js';
import { defineRegistration, type RegistrationParts } from '../src/define.js';
import { FleetError } from '../src/errors.js';
import {
  assembleRegistrations,
  type HookOutcome,
  type PluginRef,
} from '../src/registry/assemble.js';
import type { Installer } from '../src/interfaces/installer.js';
import { Registry } from '../src/registry/registry.js';
import { domainPart, fakeInstaller, type InstallerPart } from './registration-parts.js';

async function rejected(promise: Promise<unknown>): Promise<FleetError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError rejection');
}

function thrown(fn: () => unknown): FleetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError to be thrown');
}

function domain(name: string, load?: InstallerPart['load']): InstallerPart {
  return domainPart(name, load ? { load } : {});
}

const plugin = (name: string, type = 'core'): PluginRef => ({ name, version: '1.2.3', type });

/** A registry from plugins' registration parts, through the real assembly. */
function registryOf(...plugins: [PluginRef, RegistrationParts][]): Registry {
  const outcomes: HookOutcome[] = plugins.map(([ref, parts]) => ({
    plugin: ref,
    ok: true,
    result: defineRegistration(parts),
  }));
  const { accepted, problems } = assembleRegistrations(outcomes, FLEET_PLUGIN_API_VERSION);
  return new Registry(accepted, problems);
}

/** A loader that counts its calls. */
function counted<T>(value: () => Promise<T>): { load: () => Promise<T>; calls: () => number } {
  let calls = 0;
  return {
    load: () => {
      calls += 1;
      return value();
    },
    calls: () => calls,
  };
}

describe('registry/registry', () => {
  describe('listing', () => {
    it('lists domains, adopters, probers and adapters sorted, each with its plugin', () => {
      const registry = registryOf(
        [
          plugin('p-one'),
          {
            installers: [domain('zeta'), domain('alpha')],
            adopters: [{ domain: 'zeta' }, { domain: 'alpha' }],
            probers: [
              { id: 'z.probe', layer: 'runtime', description: 'd' },
              { id: 'a.probe', layer: 'version', description: 'd' },
            ],
          },
        ],
        [
          plugin('p-two', 'user'),
          {
            installers: [domain('mid')],
            bootstrapAdapters: [
              { supervisor: 'windows-task', platforms: ['win32'], description: 'd' },
              { supervisor: 'launchd', platforms: ['darwin'], description: 'd' },
            ],
          },
        ],
      );
      expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal([
        'alpha',
        'mid',
        'zeta',
      ]);
      expect(registry.domains().map((d) => d.plugin.name)).to.deep.equal([
        'p-one',
        'p-two',
        'p-one',
      ]);
      expect(registry.adopters().map((d) => d.descriptor.domain)).to.deep.equal(['alpha', 'zeta']);
      expect(registry.probers().map((d) => d.descriptor.id)).to.deep.equal(['a.probe', 'z.probe']);
      expect(registry.bootstrapAdapters().map((d) => d.descriptor.supervisor)).to.deep.equal([
        'launchd',
        'windows-task',
      ]);
    });

    it('an empty registry lists nothing', () => {
      const registry = new Registry([]);
      expect(registry.domains()).to.deep.equal([]);
      expect(registry.adopters()).to.deep.equal([]);
      expect(registry.probers()).to.deep.equal([]);
      expect(registry.bootstrapAdapters()).to.deep.equal([]);
    });

    it('two registries share nothing (no global container)', () => {
      const a = registryOf([plugin('a'), { installers: [domain('only-a')] }]);
      const b = registryOf([plugin('b'), { installers: [domain('only-b')] }]);
      expect(a.domains().map((d) => d.descriptor.domain)).to.deep.equal(['only-a']);
      expect(b.domains().map((d) => d.descriptor.domain)).to.deep.equal(['only-b']);
    });
  });

  describe('domain()', () => {
    it('returns a registered domain', () => {
      const registry = registryOf([plugin('p'), { installers: [domain('router')] }]);
      expect(registry.domain('router').descriptor.files[0]?.path).to.equal(
        '~/.config/router/router.yaml',
      );
    });

    for (const name of ['nope', 'constructor', '']) {
      it(`an unknown domain ${JSON.stringify(name)} is UNKNOWN_DOMAIN (exit 2) listing the registered ones`, () => {
        const registry = registryOf([
          plugin('p'),
          { installers: [domain('router'), domain('harness')] },
        ]);
        const error = thrown(() => registry.domain(name));
        expect(error.code).to.equal('UNKNOWN_DOMAIN');
        expect(error.exitCode).to.equal(2);
        expect(error.message)
          .to.contain(JSON.stringify(name))
          .and.contain('registered: harness, router');
      });
    }

    it('says "none" in an empty registry, and suggests the refused plugins', () => {
      const { accepted, problems } = assembleRegistrations(
        [{ plugin: plugin('broken', 'user'), ok: false, error: new Error('boom') }],
        FLEET_PLUGIN_API_VERSION,
      );
      const error = thrown(() => new Registry(accepted, problems).domain('router'));
      expect(error.message).to.contain('registered: none');
      expect(error.suggestions).to.deep.equal([
        'refused: plugin broken@1.2.3 failed to register: boom',
      ]);
    });
  });

  describe('installer()', () => {
    it('loads the implementation lazily, once, and caches it', async () => {
      const loader = counted(() => Promise.resolve(fakeInstaller('router')));
      const registry = registryOf([plugin('p'), { installers: [domain('router', loader.load)] }]);
      expect(loader.calls()).to.equal(0);
      const [a, b] = await Promise.all([
        registry.installer('router'),
        registry.installer('router'),
      ]);
      const c = await registry.installer('router');
      expect(loader.calls()).to.equal(1);
      expect(a).to.equal(b).and.equal(c);
      expect(a.domain).to.equal('router');
    });

    it('a domain without load is DOMAIN_BEHAVIOUR_ABSENT naming the plugin', async () => {
      const registry = registryOf([plugin('@fleet/router'), { installers: [domain('router')] }]);
      const error = await rejected(registry.installer('router'));
      expect(error.code).to.equal('DOMAIN_BEHAVIOUR_ABSENT');
      expect(error.exitCode).to.equal(2);
      expect(error.message).to.equal(
        'installer for router is declared by @fleet/router, which provides no implementation of it',
      );
    });

    it('an unknown domain is UNKNOWN_DOMAIN', async () => {
      const error = await rejected(registryOf().installer('router'));
      expect(error.code).to.equal('UNKNOWN_DOMAIN');
    });

    it('a load that rejects is PLUGIN_REFUSED naming the plugin, and is retried next time', async () => {
      let fail = true;
      const loader = counted(() =>
        fail
          ? Promise.reject(new Error('Cannot find module ./impl.js'))
          : Promise.resolve(fakeInstaller('router')),
      );
      const registry = registryOf([
        plugin('fleet-plugin-r', 'user'),
        { installers: [domain('router', loader.load)] },
      ]);
      const error = await rejected(registry.installer('router'));
      expect(error.code).to.equal('PLUGIN_REFUSED');
      expect(error.message)
        .to.contain('fleet-plugin-r@1.2.3')
        .and.contain('Cannot find module ./impl.js');
      expect((error as Error).cause).to.be.instanceOf(Error);
      fail = false;
      expect((await registry.installer('router')).domain).to.equal('router');
      expect(loader.calls()).to.equal(2);
    });

    it('a load that throws instead of rejecting is PLUGIN_REFUSED naming the plugin too', async () => {
      const registry = registryOf([
        plugin('fleet-plugin-sync', 'user'),
        {
          installers: [
            domain('router', () => {
              throw new Error('boom at load');
            }),
          ],
        },
      ]);
      const error = await rejected(registry.installer('router'));
      expect(error.code).to.equal('PLUGIN_REFUSED');
      expect(error.message).to.contain('fleet-plugin-sync@1.2.3').and.contain('boom at load');
    });

    const broken: [title: string, value: unknown, message: RegExp][] = [
      ['not an object', 'installer', /is not an object/],
      ['null', null, /is not an object/],
      [
        'lacking install()',
        { domain: 'router', view: () => '', managed: () => '' },
        /lacks install\(\)/,
      ],
      [
        'lacking managed()',
        { domain: 'router', view: () => '', install: () => undefined },
        /lacks managed\(\)/,
      ],
      ['lacking view()', { domain: 'router', install: () => undefined }, /lacks view\(\)/],
      [
        'with view as a non-function',
        { domain: 'router', view: 'x', install: () => undefined },
        /lacks view\(\)/,
      ],
      ['reporting another domain', { ...fakeInstaller('other') }, /reports domain "other"/],
      [
        'reporting no domain',
        { view: () => '', install: () => undefined },
        /reports domain undefined/,
      ],
    ];
    for (const [title, value, message] of broken) {
      it(`refuses a loaded installer ${title}`, async () => {
        const registry = registryOf([
          plugin('fleet-plugin-r', 'user'),
          { installers: [domain('router', () => Promise.resolve(value as Installer))] },
        ]);
        const error = await rejected(registry.installer('router'));
        expect(error.code).to.equal('PLUGIN_REFUSED');
        expect(error.message)
          .to.contain('fleet-plugin-r@1.2.3: installer for domain router')
          .and.match(message);
      });
    }
  });

  describe('adopter(), prober(), bootstrapAdapter()', () => {
    it('load structurally checked implementations', async () => {
      const adopter = { domain: 'router', candidate: () => undefined, mirrorPath: () => '' };
      const prober = { collect: () => undefined, evaluate: () => [] };
      const adapter = Object.fromEntries(
        [
          'definition',
          'readDefinition',
          'preflight',
          'installDefinition',
          'start',
          'stop',
          'restart',
          'observe',
          'recordNodeId',
        ].map((m) => [m, () => 0]),
      );
      const registry = registryOf([
        plugin('p'),
        {
          installers: [domain('router')],
          adopters: [{ domain: 'router', load: () => Promise.resolve(adopter as never) }],
          probers: [
            {
              id: 'router.volume',
              layer: 'derived',
              description: 'd',
              load: () => Promise.resolve(prober as never),
            },
          ],
          bootstrapAdapters: [
            {
              supervisor: 'lab',
              platforms: ['linux'],
              description: 'd',
              load: () => Promise.resolve(adapter as never),
            },
          ],
        },
      ]);
      expect(await registry.adopter('router')).to.equal(adopter);
      expect(await registry.prober('router.volume')).to.equal(prober);
      expect(await registry.bootstrapAdapter('lab')).to.equal(adapter);
    });

    it('refuses implementations lacking their methods', async () => {
      const registry = registryOf([
        plugin('p'),
        {
          installers: [domain('router')],
          adopters: [
            { domain: 'router', load: () => Promise.resolve({ domain: 'router' } as never) },
          ],
          probers: [
            {
              id: 'x.y',
              layer: 'runtime',
              description: 'd',
              load: () => Promise.resolve({ collect: () => 0 } as never),
            },
          ],
          bootstrapAdapters: [
            {
              supervisor: 'lab',
              platforms: ['linux'],
              description: 'd',
              load: () => Promise.resolve({} as never),
            },
          ],
        },
      ]);
      expect((await rejected(registry.adopter('router'))).message).to.contain('lacks candidate()');
      expect((await rejected(registry.prober('x.y'))).message).to.contain('lacks evaluate()');
      expect((await rejected(registry.bootstrapAdapter('lab'))).message).to.contain(
        'lacks definition()',
      );
    });

    it('says what is missing', async () => {
      const registry = registryOf([plugin('p'), { installers: [domain('router')] }]);
      const noAdopter = await rejected(registry.adopter('router'));
      expect(noAdopter.code).to.equal('DOMAIN_BEHAVIOUR_ABSENT');
      expect(noAdopter.message).to.contain('domain router has no adopter');
      expect((await rejected(registry.adopter('ghost'))).code).to.equal('UNKNOWN_DOMAIN');
      expect((await rejected(registry.prober('ghost.probe'))).message).to.contain(
        'unknown prober "ghost.probe"',
      );
      expect((await rejected(registry.bootstrapAdapter('launchd'))).message).to.contain(
        'supervisor launchd',
      );
    });
  });
});
