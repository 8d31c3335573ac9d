/** Acceptance of a started runtime (contract §12, catalogue 51): every criterion, one at a time. */
import { expect } from 'chai';
import type { IdentityResponse } from '@fleet/core';
import { acceptRuntime, describeFailures } from '../src/generations/acceptance.js';
import { BUILD_A, BUILD_B, expectation, identityFor } from './support/runtime.js';

const expected = expectation(BUILD_A);
const exact = identityFor(expected);

/** The criteria that fail when the identity is changed by `tweak`. */
function failing(tweak: (identity: IdentityResponse) => IdentityResponse): string[] {
  return acceptRuntime(expected, tweak(exact)).failures.map((f) => f.criterion);
}

describe('acceptRuntime', () => {
  it('accepts the exact runtime', () => {
    expect(acceptRuntime(expected, exact)).to.deep.equal({ accepted: true, failures: [] });
  });

  it('accepts a runtime with more catalog entries than expected', () => {
    const more = identityFor(
      expectation(BUILD_A, {
        catalog: {
          domains: ['router', 'extra'],
          probers: ['router.volume'],
          bootstrapAdapters: ['systemd-user'],
        },
      }),
    );
    expect(acceptRuntime(expected, more).accepted).to.equal(true);
  });

  const cases: [string, (identity: IdentityResponse) => IdentityResponse, string[]][] = [
    ['another node id', (i) => ({ ...i, nodeId: 'node-02' }), ['node-id']],
    [
      'the right node id but another --node-id flag',
      (i) => ({ ...i, nodeIdFlag: 'node-02' }),
      ['node-id-flag'],
    ],
    ['another package', (i) => ({ ...i, package: '@evil/cli' }), ['package']],
    ['another version', (i) => ({ ...i, version: '1.1.0' }), ['version']],
    [
      'another build sha256 (same version)',
      (i) => ({ ...i, build: { ...i.build, sha256: BUILD_B } }),
      ['build-sha256'],
    ],
    [
      'no build sha256 (a dev build)',
      (i) => ({ ...i, build: { ...i.build, sha256: null } }),
      ['build-sha256'],
    ],
    ['another commit', (i) => ({ ...i, build: { ...i.build, commit: 'other' } }), ['build-commit']],
    ['an incompatible protocol', (i) => ({ ...i, protocol: 2 }), ['protocol']],
    ['a missing domain', (i) => ({ ...i, catalog: { ...i.catalog, domains: [] } }), ['catalog']],
    ['a missing prober', (i) => ({ ...i, catalog: { ...i.catalog, probers: [] } }), ['catalog']],
    [
      'a missing bootstrap adapter',
      (i) => ({ ...i, catalog: { ...i.catalog, bootstrapAdapters: [] } }),
      ['catalog'],
    ],
    [
      'degraded health',
      (i) => ({
        ...i,
        health: {
          status: 'degraded',
          checks: [{ name: 'audit-log', status: 'failing', detail: 'x' }],
        },
      }),
      ['health'],
    ],
  ];
  for (const [name, tweak, criteria] of cases) {
    it(`refuses ${name}`, () => {
      expect(failing(tweak)).to.deep.equal(criteria);
    });
  }

  describe('the plugins fleet.yaml names (contract §10.5)', () => {
    const pin = { name: 'fleet-plugin-gitconfig', version: '0.1.0', sha256: BUILD_B };
    const withPin = expectation(BUILD_A, {
      catalog: { ...expected.catalog, plugins: [pin] },
    });
    const loaded = (plugins: { name: string; version: string; sha256: string }[]) =>
      identityFor(withPin, {
        catalog: {
          ...identityFor(withPin).catalog,
          plugins: plugins.map((p) => ({ ...p, domains: ['gitconfig'] })),
        },
      });
    const cases: [string, IdentityResponse, string | null][] = [
      ['loaded as pinned', loaded([pin]), null],
      ['not loaded', loaded([]), 'missing plugin fleet-plugin-gitconfig 0.1.0'],
      [
        'another version',
        loaded([{ ...pin, version: '0.2.0' }]),
        'missing plugin fleet-plugin-gitconfig 0.1.0',
      ],
      [
        'another tarball',
        loaded([{ ...pin, sha256: BUILD_A }]),
        'missing plugin fleet-plugin-gitconfig 0.1.0',
      ],
      [
        'a runtime that reports no plugins',
        identityFor(withPin),
        'missing plugin fleet-plugin-gitconfig 0.1.0',
      ],
    ];
    for (const [name, identity, problem] of cases) {
      it(`${name}: ${problem === null ? 'accepted' : 'refused (catalog)'}`, () => {
        const result = acceptRuntime(withPin, identity);
        expect(result.accepted).to.equal(problem === null);
        if (problem !== null) {
          expect(result.failures.map((f) => f.criterion)).to.deep.equal(['catalog']);
          expect(result.failures[0]?.actual).to.contain(problem);
        }
      });
    }
  });

  it('never accepts on a matching version alone: every other criterion wrong is listed', () => {
    const impostor: IdentityResponse = {
      ...exact,
      nodeId: 'node-09',
      nodeIdFlag: 'node-09',
      package: 'fleet-fork',
      build: { sha256: BUILD_B, commit: null },
      protocol: 9,
      catalog: { domains: [], probers: [], bootstrapAdapters: [] },
      health: { status: 'degraded', checks: [] },
    };
    const result = acceptRuntime(expected, impostor);
    expect(result.accepted).to.equal(false);
    expect(result.failures.map((f) => f.criterion)).to.deep.equal([
      'node-id',
      'node-id-flag',
      'package',
      'build-sha256',
      'build-commit',
      'protocol',
      'catalog',
      'health',
    ]);
    expect(describeFailures(result.failures)[0]).to.equal('node-id: expected node-01, got node-09');
  });

  it('refuses when no runtime answered', () => {
    expect(acceptRuntime(expected, null).failures.map((f) => f.criterion)).to.deep.equal([
      'reachable',
    ]);
  });

  it('names every missing catalog entry', () => {
    const result = acceptRuntime(expected, {
      ...exact,
      catalog: { domains: [], probers: [], bootstrapAdapters: [] },
    });
    expect(result.failures[0]?.actual).to.equal(
      'missing domain router, prober router.volume, bootstrap adapter systemd-user',
    );
  });

  it('checks the version only when the expectation names one', () => {
    const anyVersion = expectation(BUILD_A, { version: null });
    expect(acceptRuntime(anyVersion, { ...exact, version: '9.9.9' }).accepted).to.equal(true);
  });
});
