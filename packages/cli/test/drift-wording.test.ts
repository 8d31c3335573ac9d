/** The human `fleet drift` summary's wording (issue 17: `--domain X` on no host said "3 current"). */
import { expect } from 'chai';
import { buildDriftReport, escapeControl } from '@fleet/core';
import { renderSummary } from '../src/commands/drift.js';

describe('fleet drift: the human summary', () => {
  const report = buildDriftReport({
    generatedAt: new Date(0),
    repoCommit: 'a'.repeat(40),
    canonicalVersion: '1.0.0',
    hosts: ['node-01', 'node-02', 'node-03'].map((host) => ({
      host,
      status: 'current' as const,
      items: [],
    })),
  });

  it('says no host runs a --domain that no host runs, instead of "3 current"', () => {
    expect(renderSummary(report, escapeControl, ['gitconfig'])).to.equal(
      'no host runs gitconfig: nothing to compare (3 hosts in fleet.yaml, commit aaaaaaaaaaaa)',
    );
  });

  it('without --domain, counts the hosts as before', () => {
    expect(renderSummary(report, escapeControl)).to.contain('3 hosts: 3 current');
  });
});
