/**
 * `@fleet/core/node`, the node-side entry (contract §14: the controller loads what a node needs):
 * a subset of the main entry, never a second copy — each value it exports is the main entry's own
 * object, so a `FleetError` thrown through one entry is `instanceof` through the other and a
 * plugin may mix them. What the controller process does not load is checked where it runs
 * (test/integration/controller-entry.test.ts).
 */
import { expect } from 'chai';
import * as main from '@fleet/core';
import * as node from '@fleet/core/node';

describe('@fleet/core/node', () => {
  it('exports only what the main entry exports, each the very same value', () => {
    const names = Object.keys(node);
    expect(names.length).to.be.greaterThan(100);
    const missing = names.filter((name) => !(name in main));
    expect(missing, 'exported by the node entry but not by @fleet/core').to.deep.equal([]);
    const different = names.filter(
      (name) => (node as Record<string, unknown>)[name] !== (main as Record<string, unknown>)[name],
    );
    expect(different, 'a second copy of a main-entry value').to.deep.equal([]);
  });

  it('has what the node halves use: the registry, errors, installers, the wire, the policy', () => {
    for (const name of [
      'defineRegistration',
      'Registry',
      'FleetError',
      'fileInstaller',
      'wholeFileInstaller',
      'fileAdopter',
      'matchRoute',
      'readNodePolicyFile',
      'createEnvChainLoader',
      'runtimeCommand',
      'AUDIT_HEAD_HEADER',
      'probedPath',
      'escapeControl',
    ]) {
      expect(node, name).to.have.property(name);
    }
    const error = new node.FleetError('USAGE', 'x');
    expect(error).to.be.instanceOf(main.FleetError);
    expect(main.isFleetError(error)).to.equal(true);
  });

  it("leaves out the operator's verbs, reports, repository loader, client logs and scaffold", () => {
    for (const name of [
      'runDrift',
      'buildDomainPlan',
      'applyDecision',
      'renderDriftHtml',
      'loadRepo',
      'pluginScaffold',
      'recordOperatorVerb',
      'forEachHost',
      'classify',
      'installParameters',
    ]) {
      expect(main, name).to.have.property(name);
      expect(node, name).not.to.have.property(name);
    }
  });
});
