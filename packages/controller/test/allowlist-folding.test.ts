/**
 * The node's allowlist compares folded (core policy/fold.ts; reliability catalogue, "Path
 * folding"): a files-domain pattern never hands it another domain's path spelt in another case or
 * with ſ, nor fleet's own state, and `dir/**` admits what lies under `dir`, never `dir` itself.
 */
import { expect } from 'chai';
import { isFleetError, parseNodePolicy, type DomainDeclaration } from '@fleet/core';
import { Allowlist } from '../src/allowlist.js';

const identity: DomainDeclaration = {
  domain: 'transport-identity',
  description: 't',
  files: [
    {
      id: 'transport.yaml',
      path: '~/.config/fleet/transport.yaml',
      canonical: 'transport.yaml',
      kind: 'whole',
      format: 'yaml',
    },
  ],
  hostVariables: [],
  coupling: { kind: 'none' },
};
const files: DomainDeclaration = {
  domain: 'files',
  description: 'f',
  files: [],
  hostVariables: [],
  coupling: { kind: 'none' },
  repoManifest: 'files.yaml',
};

function allowlist(policyText: string): Allowlist {
  const { policy } = parseNodePolicy(policyText, 'node-policy.yaml');
  const registry = {
    domains: () =>
      [identity, files].map((descriptor) => ({
        descriptor: { ...descriptor, load: () => Promise.resolve({}) },
      })),
  };
  return new Allowlist(registry as never, policy);
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isFleetError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'admitted';
}

describe('allowlist: folded comparisons', () => {
  const list = allowlist(
    "version: 1\ndomains:\n  files: { patterns: ['~/.config/**', '~/notes/**'] }\n  transport-identity: {}\n",
  );

  it('admits a files path the pattern matches', () => {
    expect(list.require('~/.config/demo/x.conf', 'files').path).to.equal('~/.config/demo/x.conf');
  });

  for (const path of [
    '~/.config/fleet/transport.yaml',
    '~/.config/Fleet/transport.yaml',
    '~/.config/FLEET/TRANSPORT.YAML',
    '~/.config/fleet/tranſport.yaml',
  ]) {
    it(`refuses ${path} under ~/.config/**: transport-identity's file`, () => {
      expect(refusal(() => list.require(path, 'files'))).to.equal(
        `POLICY_REFUSED: ${JSON.stringify(path)} is a path of domain transport-identity, never one of domain files`,
      );
    });
  }

  for (const path of [
    '~/.config/fleet/credentialſ.json',
    '~/.config/Fleet/Node-Policy.yaml',
    '~/.local/ſtate/fleet/tokens.json',
  ]) {
    it(`refuses ${path}: fleet's own state, whatever the pattern`, () => {
      expect(refusal(() => list.require(path, 'files'))).to.match(
        /^PATH_OUTSIDE_ROOT: .*fleet's own state/,
      );
    });
  }

  it('refuses an 8.3 short name before any pattern is asked', () => {
    expect(refusal(() => list.require('~/.config/FLEET~1/env', 'files'))).to.match(
      /^PATH_INVALID: .*8\.3 short name/,
    );
  });

  it('refuses ~/notes itself under ~/notes/**: a file there would take the directory’s place', () => {
    expect(list.require('~/notes/todo.md', 'files').path).to.equal('~/notes/todo.md');
    expect(refusal(() => list.require('~/notes', 'files'))).to.match(
      /^POLICY_REFUSED: "~\/notes" is not a path this node accepts for domain files/,
    );
  });
});
