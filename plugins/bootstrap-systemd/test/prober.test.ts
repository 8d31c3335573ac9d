/** The `systemd-user.unit` prober's operator half (supervision drift, contract §12), as a table. */
import { expect } from 'chai';
import type { ProbeDesired } from '@fleet/core';
import { createUnitProber, type UnitFacts } from '../src/index.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

const healthy: UnitFacts = {
  unit: '~/.config/systemd/user/fleet-controller.service',
  present: true,
  enabled: true,
  running: true,
  state: 'active',
  pid: 4242,
  needsReload: false,
  source: 'process',
  generation: A,
  nodeIdFlag: 'node-01',
  fileGeneration: A,
  fileNodeIdFlag: 'node-01',
  current: A,
  currentState: 'set',
  linger: 'yes',
  controllerNodeId: 'node-01',
  error: null,
};

const desired: ProbeDesired = {
  host: 'node-01',
  variables: { node_id: 'node-01' },
  canonicalVersion: '1.0.0',
  parameters: {},
};

describe('systemd-user.unit: supervision drift', () => {
  const prober = createUnitProber();
  const cases: [string, Partial<Record<keyof UnitFacts, unknown>>, string, RegExp][] = [
    ['a running, enabled unit of the current generation', {}, 'current', /generation aaaaaaaaaaaa/],
    [
      'a development build (no current, no generation: a lab)',
      { generation: null, current: null, currentState: 'absent' },
      'current',
      /a development build/,
    ],
    ['no unit', { present: false }, 'missing', /no controller unit/],
    ['a stopped unit', { running: false, state: 'inactive' }, 'stale', /not running \(inactive\)/],
    ['a disabled unit', { enabled: false }, 'stale', /not enabled/],
    ['a unit file changed, not reloaded', { needsReload: true }, 'stale', /NeedDaemonReload=yes/],
    [
      'an ExecStart of another generation than current',
      { generation: B },
      'stale',
      /runs generation bbbbbbbbbbbb, current is aaaaaaaaaaaa/,
    ],
    [
      'a generation but no current pointer',
      { current: null, currentState: 'absent' },
      'stale',
      /current generation pointer is absent/,
    ],
    [
      'another --node-id',
      { nodeIdFlag: 'node-02' },
      'stale',
      /--node-id node-02, expected node-01/,
    ],
    ['no lingering', { linger: 'no' }, 'stale', /no lingering/],
    ['systemd not reachable', { error: 'no bus' }, 'error', /systemd could not be asked: no bus/],
  ];
  for (const [name, change, state, detail] of cases) {
    it(`${name}: ${state}`, () => {
      const items = prober.evaluate({ ...healthy, ...change } as UnitFacts, desired);
      expect(items).to.have.length(1);
      expect(items[0]).to.include({ layer: 'runtime', path: healthy.unit, state });
      expect(items[0]?.detail).to.match(detail);
    });
  }
});
