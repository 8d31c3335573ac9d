/**
 * A fleet-wide upgrade's lines and document (upgrade-model.ts, issue 36), pure: each host's line
 * for what its upgrade answered or threw, the line of a host never started, and the document's
 * summary and exit code.
 */
import { expect } from 'chai';
import * as core from '@fleet/core';
import {
  failedEntry,
  fleetUpgradeDocument,
  skippedHost,
  upgradedEntry,
  type FleetUpgradeHost,
  type HostUpgraded,
} from '../src/runtime/upgrade-model.js';

const DONE: HostUpgraded = {
  host: 'node-01',
  nodeId: 'node-01',
  supervisor: 'systemd-user',
  strategy: 'tarball',
  from: { version: '1.0.0', build: 'a'.repeat(64) },
  to: { version: '1.1.0', build: 'b'.repeat(64), commit: 'c'.repeat(40), file: 'f.tgz' },
  outcome: 'accepted',
  describe: 'node-01: 1.0.0 -> 1.1.0',
};

const line = (host: string, outcome: FleetUpgradeHost['outcome'], exitCode: number) =>
  ({ host, canary: false, outcome, exitCode }) as const;

describe('fleet upgrade --all: its lines and document (issue 36)', () => {
  for (const [outcome, transaction, exitCode] of [
    ['accepted', 'txn-1', 0],
    ['current', undefined, 0],
    ['planned', undefined, 2],
  ] as const) {
    it(`a host ${outcome}${transaction ? ' in a transaction' : ''}: exit ${exitCode}`, () => {
      const done: HostUpgraded = {
        ...DONE,
        outcome,
        ...(transaction === undefined ? {} : { transaction }),
      };
      expect(upgradedEntry(done, true)).to.deep.equal({
        host: 'node-01',
        canary: true,
        outcome,
        exitCode,
        ...(transaction === undefined ? {} : { transaction }),
        from: DONE.from,
        to: DONE.to,
      });
    });
  }

  it('a failure: its outcome, code and message, suggestions only when there are some', () => {
    const bare = failedEntry('node-02', false, new core.FleetError('ROLLED_BACK', 'gone'));
    expect(bare.outcome).to.equal('rolled-back');
    expect(bare.error).to.deep.equal({ code: 'ROLLED_BACK', message: 'gone' });
    const advised = failedEntry(
      'node-02',
      false,
      new core.FleetError('HOST_UNREACHABLE', 'away', { suggestions: ['fleet status'] }),
    );
    expect(advised).to.deep.include({ outcome: 'unreachable', exitCode: 5 });
    expect(advised.error?.suggestions).to.deep.equal(['fleet status']);
  });

  it('a host never started names where the run stopped', () => {
    expect(skippedHost('node-03', 'node-01')).to.deep.equal({
      host: 'node-03',
      canary: false,
      outcome: 'skipped',
      exitCode: 0,
      error: {
        code: 'SKIPPED',
        message: 'not started: the run stopped at node-01, which was not accepted',
      },
    });
    expect(skippedHost('node-03', null).error?.message).to.include('stopped at ?');
  });

  const documents: {
    name: string;
    confirmed: boolean;
    hosts: FleetUpgradeHost[];
    exitCode: number;
    stoppedAt: string | null;
  }[] = [
    { name: 'no host', confirmed: true, hosts: [], exitCode: 0, stoppedAt: 'x' },
    {
      name: 'every host current: 3',
      confirmed: true,
      hosts: [line('a', 'current', 0), line('b', 'current', 0)],
      exitCode: 3,
      stoppedAt: 'x',
    },
    {
      name: 'planned: 2, and no stop without confirm',
      confirmed: false,
      hosts: [line('a', 'planned', 2), line('b', 'current', 0)],
      exitCode: 2,
      stoppedAt: null,
    },
    {
      name: 'the most urgent of the hosts',
      confirmed: true,
      hosts: [line('a', 'accepted', 0), line('b', 'unreachable', 5), line('c', 'skipped', 0)],
      exitCode: 5,
      stoppedAt: 'x',
    },
  ];
  for (const { name, confirmed, hosts, exitCode, stoppedAt } of documents) {
    it(`the document: ${name}`, () => {
      const now = new Date('2026-01-02T03:04:05.000Z');
      const document = fleetUpgradeDocument(
        { confirmed, canary: hosts[0]?.host ?? null, concurrency: 2, stoppedAt: 'x', hosts },
        now,
      );
      expect(document.exitCode).to.equal(exitCode);
      expect(document.stoppedAt).to.equal(stoppedAt);
      expect(document.generatedAt).to.equal(now.toISOString());
      expect(document.summary.hosts).to.equal(hosts.length);
      const counted = Object.entries(document.summary).filter(([key]) => key !== 'hosts');
      expect(counted).to.have.length(11);
      expect(counted.reduce((sum, [, n]) => sum + n, 0)).to.equal(hosts.length);
      for (const host of hosts) expect(document.summary[host.outcome]).to.be.greaterThan(0);
    });
  }
});
