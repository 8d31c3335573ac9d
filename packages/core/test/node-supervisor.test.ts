/** The node policy's `supervisor` against the adapter's record (contract §12), as a table. */
import { expect } from 'chai';
import {
  isFleetError,
  resolveNodeSupervisor,
  type NodeSupervisor,
  type SupervisorRecord,
} from '../src/index.js';

const where = {
  policyFile: '~/.config/fleet/node-policy.yaml',
  recordFile: '~/.local/state/fleet/supervisor.json',
};

function record(supervisor: SupervisorRecord['supervisor'], name: string): SupervisorRecord {
  return {
    version: 1,
    supervisor,
    name,
    definition: '~/.config/systemd/user/x.service',
    recordedAt: '2026-12-01T00:00:00.000Z',
  };
}

const UNIT = 'fleet-controller.service';

describe('which supervisor runs the node (policy and record)', () => {
  const cases: [string, NodeSupervisor | undefined, SupervisorRecord | null, string | RegExp][] = [
    ['neither names one', undefined, null, /no bootstrap adapter recorded/],
    ['the policy says none, no record', { kind: 'none' }, null, /no bootstrap adapter recorded/],
    ['only the record', undefined, record('systemd-user', UNIT), `systemd-user ${UNIT}`],
    [
      'both, the same unit',
      { kind: 'systemd-user', unit: UNIT },
      record('systemd-user', UNIT),
      `systemd-user ${UNIT}`,
    ],
    [
      'both, the same task (path form in the policy)',
      { kind: 'windows-task', task: '\\fleet-controller' },
      record('windows-task', 'fleet-controller'),
      'windows-task fleet-controller',
    ],
    [
      'both, the lab (kind only)',
      { kind: 'lab', socket: '/tmp/l/s.sock' },
      record('lab', 'h1'),
      'lab h1',
    ],
    [
      'only the policy: nothing fleet installed to drive',
      { kind: 'systemd-user', unit: UNIT },
      null,
      /names systemd-user fleet-controller.service, but no bootstrap adapter recorded/,
    ],
  ];
  for (const [name, policy, recorded, expected] of cases) {
    it(name, () => {
      const resolved = resolveNodeSupervisor(policy, recorded, where);
      if (typeof expected === 'string') {
        expect(resolved.drives).to.equal(true);
        if (resolved.drives)
          expect(`${resolved.record.supervisor} ${resolved.record.name}`).to.equal(expected);
      } else {
        expect(resolved.drives).to.equal(false);
        if (!resolved.drives) expect(resolved.reason).to.match(expected);
      }
    });
  }

  const refused: [string, NodeSupervisor, SupervisorRecord][] = [
    ['another unit', { kind: 'systemd-user', unit: 'other.service' }, record('systemd-user', UNIT)],
    ['another kind', { kind: 'windows-task', task: '\\fleet-controller' }, record('lab', 'h1')],
    ['none, but a record', { kind: 'none' }, record('systemd-user', UNIT)],
    [
      'launchd, but a record',
      { kind: 'launchd', label: 'dev.fleet.controller' },
      record('lab', 'h1'),
    ],
  ];
  for (const [name, policy, recorded] of refused) {
    it(`refuses ${name} (SUPERVISOR_MISMATCH)`, () => {
      let error: unknown;
      try {
        resolveNodeSupervisor(policy, recorded, where);
      } catch (caught) {
        error = caught;
      }
      expect(isFleetError(error) && error.code).to.equal('SUPERVISOR_MISMATCH');
      expect((error as Error).message)
        .to.contain(where.policyFile)
        .and.to.contain(recorded.name);
      expect((error as Error).message).not.to.contain('\n');
    });
  }
});
