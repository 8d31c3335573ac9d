/**
 * `@fleet/core/plugin`, the plugin API (src/plugin.ts): a subset of the node entry, never a second
 * copy — a plugin's modules load in the node's controller, so the entry holds node-side values
 * only, each the very object `@fleet/core/node` and `@fleet/core` export.
 */
import { expect } from 'chai';
import * as main from '@fleet/core';
import * as node from '@fleet/core/node';
import * as plugin from '@fleet/core/plugin';

describe('@fleet/core/plugin', () => {
  it('exports only what the node entry exports, each the very same value', () => {
    const names = Object.keys(plugin);
    const missing = names.filter((name) => !(name in node));
    expect(missing, 'exported by the plugin entry but not by @fleet/core/node').to.deep.equal([]);
    const different = names.filter(
      (name) =>
        (plugin as Record<string, unknown>)[name] !== (node as Record<string, unknown>)[name] ||
        (plugin as Record<string, unknown>)[name] !== (main as Record<string, unknown>)[name],
    );
    expect(different, 'a second copy of a node-entry value').to.deep.equal([]);
  });

  it('has what a plugin builds with: registration, errors, installers, guards, home reads', () => {
    for (const name of [
      'defineRegistration',
      'FleetError',
      'isFleetError',
      'fileInstaller',
      'fileAdopter',
      'writeVerified',
      'restoreWritten',
      'resolveSecrets',
      'probedPath',
      'oneFileRequest',
      'requireDomain',
      'createHomeFileReader',
      'adapterControllerSupervisor',
    ]) {
      expect(plugin, name).to.have.property(name);
    }
    const error = new plugin.FleetError('ACTION_FAILED', 'x', {
      actions: [{ kind: 'reload', status: 'failed', detail: 'exited 1' }],
    });
    expect(error).to.be.instanceOf(node.FleetError);
    expect(main.isFleetError(error) && error.actions).to.deep.equal([
      { kind: 'reload', status: 'failed', detail: 'exited 1' },
    ]);
  });

  it('has the action roles the file installers run (plugin-authoring.md §7), in their order', () => {
    expect([plugin.VALIDATE_ROLE, plugin.RELOAD_ROLE, plugin.RESTART_ROLE]).to.deep.equal([
      'validate',
      'reload',
      'restart',
    ]);
    expect(plugin.ACTION_ROLES).to.deep.equal(['validate', 'reload', 'restart']);
  });

  it("leaves out the node's own machinery and the operator's services", () => {
    for (const name of [
      'Registry',
      'assembleRegistrations',
      'readNodePolicyFile',
      'matchRoute',
      'assessHost',
      'forEachHost',
      'buildDomainPlan',
      'loadRepo',
      'pluginScaffold',
    ]) {
      expect(main, name).to.have.property(name);
      expect(plugin, name).not.to.have.property(name);
    }
  });
});
