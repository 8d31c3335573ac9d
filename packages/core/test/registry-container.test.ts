/**
 * The CLI's verbs keep their registry in the command's tsyringe container: each plugin's
 * descriptors become registrations under `REGISTRY_TOKENS`
 * (docs/adr/0027-the-registry-lives-in-the-container.md). A test swaps a plugin's
 * implementation by registering a fake descriptor in a child container before the registry is
 * built from it; the parent and sibling containers never see it.
 */
import { expect } from 'chai';
import { FLEET_PLUGIN_API_VERSION } from '../src/api-version.js';
import { defineRegistration, type RegistrationParts } from '../src/define.js';
import { container, containerStore, type DependencyContainer } from '../src/di.js';
import type { InstallerDescriptor } from '../src/interfaces/registration.js';
import { assembleRegistrations, type PluginRef } from '../src/registry/assemble.js';
import { Registry, REGISTRY_TOKENS, type Registered } from '../src/registry/registry.js';
import { domainPart, fakeInstaller } from './registration-parts.js';

const plugin = (name: string): PluginRef => ({ name, version: '1.0.0', type: 'core' });

/** A registry built into `scope` from one plugin's parts, through the real assembly. */
function registryIn(scope: DependencyContainer, name: string, parts: RegistrationParts): Registry {
  const { accepted, problems } = assembleRegistrations(
    [{ plugin: plugin(name), ok: true, result: defineRegistration(parts) }],
    FLEET_PLUGIN_API_VERSION,
  );
  return new Registry(accepted, problems, containerStore(scope));
}

describe('registry in a container (core/di containerStore)', () => {
  it("registers each plugin's descriptors in the container under the registry's tokens", () => {
    const scope = container.createChildContainer();
    const registry = registryIn(scope, 'notes-plugin', {
      installers: [domainPart('notes'), domainPart('alpha')],
      adopters: [{ domain: 'notes' }],
      probers: [{ id: 'notes.probe', layer: 'version', description: 'd' }],
    });
    const domains = scope.resolveAll<Registered<InstallerDescriptor>>(REGISTRY_TOKENS.domain);
    expect(domains.map((d) => [d.plugin.name, d.descriptor.domain])).to.deep.equal([
      ['notes-plugin', 'notes'],
      ['notes-plugin', 'alpha'],
    ]);
    expect(scope.resolveAll(REGISTRY_TOKENS.adopter)).to.have.length(1);
    expect(scope.resolveAll(REGISTRY_TOKENS.prober)).to.have.length(1);
    expect(scope.isRegistered(REGISTRY_TOKENS.bootstrapAdapter, true)).to.equal(false);
    expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal(['alpha', 'notes']);
    expect(registry.bootstrapAdapters()).to.deep.equal([]);
  });

  it('a fake registered in a child container before the registry is built is listed and loaded', async () => {
    const scope = container.createChildContainer();
    const fake = fakeInstaller('scratch');
    scope.register<Registered<InstallerDescriptor>>(REGISTRY_TOKENS.domain, {
      useValue: {
        plugin: plugin('test-fakes'),
        descriptor: {
          ...domainPart('scratch', { load: () => Promise.resolve(fake) }),
          kind: 'fleet.installer',
        },
      },
    });
    const registry = registryIn(scope, 'notes-plugin', {
      installers: [domainPart('notes', { load: () => Promise.resolve(fakeInstaller('notes')) })],
    });
    expect(registry.domains().map((d) => `${d.plugin.name}:${d.descriptor.domain}`)).to.deep.equal([
      'notes-plugin:notes',
      'test-fakes:scratch',
    ]);
    expect(await registry.installer('scratch')).to.equal(fake);
    expect(registry.plugins.map((p) => p.name)).to.deep.equal(['notes-plugin']);
  });

  it("one command's registrations stay in its container: the parent and a sibling see none", () => {
    const parent = container.createChildContainer();
    const first = parent.createChildContainer();
    const second = parent.createChildContainer();
    registryIn(first, 'notes-plugin', { installers: [domainPart('notes')] });
    const other = registryIn(second, 'router-plugin', { installers: [domainPart('router')] });
    expect(parent.isRegistered(REGISTRY_TOKENS.domain, true)).to.equal(false);
    expect(container.isRegistered(REGISTRY_TOKENS.domain, true)).to.equal(false);
    expect(other.domains().map((d) => d.descriptor.domain)).to.deep.equal(['router']);
  });
});
