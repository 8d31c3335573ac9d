/**
 * How an install answered before a coupled restart is settled at the next start (contract §10.2,
 * settle-pending.ts), pure: verified when the controller runs with the expected `--node-id`,
 * otherwise rolled back — `VERIFICATION_FAILED` when every written file went back,
 * `RECOVERY_REQUIRED` when one could not.
 */
import { expect } from 'chai';
import { buildReceipt } from '../src/handlers/receipt.js';
import { rolledBackSettlement, verifiedSettlement } from '../src/settle-pending.js';

const SHA = 'a'.repeat(64);
const AT = '2026-01-02T03:04:05.000Z';

const template = buildReceipt({
  operationId: '01HZY3M5Q8R2T7V9W4X6Y0Z1AB',
  host: 'node-01',
  domain: 'transport-identity',
  files: ['~/a', '~/b'].map((path) => ({
    path,
    fileId: path,
    beforeSha256: SHA,
    afterSha256: SHA,
    backupPath: null,
    diff: '',
    state: 'written' as const,
  })),
  actions: [
    { kind: 'restart', status: 'pending', detail: 'restart pending' },
    { kind: 'reload', status: 'ok', detail: 'reloaded' },
  ],
  verified: false,
  finishedAt: AT,
});

describe('settling a pending restart', () => {
  it('verified: the pending actions done, the receipt verified', () => {
    const { receipt, outcome, detail } = verifiedSettlement(template, 'node-02', AT);
    expect(outcome).to.equal('ok');
    expect(detail).to.equal(
      'restart settled: the restarted controller runs with --node-id node-02, as expected',
    );
    expect(receipt.host).to.equal('node-02');
    expect(receipt.verified).to.equal(true);
    expect(receipt.actions.map((a) => [a.status, a.detail])).to.deep.equal([
      ['ok', 'restart pending; done: the restarted controller runs with --node-id node-02'],
      ['ok', 'reloaded'],
    ]);
  });

  const cases: [
    name: string,
    restore: { restored: string[]; failed: string[] },
    outcome: string,
    code: string,
    states: string[],
    restoreAction: [status: string, detail: string],
  ][] = [
    [
      'every file restored',
      { restored: ['~/a', '~/b'], failed: [] },
      'rolled-back',
      'VERIFICATION_FAILED',
      ['restored', 'restored'],
      ['ok', 'every written file was restored from its backup'],
    ],
    [
      'a file not restored',
      { restored: ['~/a'], failed: ['~/b: gone'] },
      'failed',
      'RECOVERY_REQUIRED',
      ['restored', 'written'],
      ['failed', 'not restored: ~/b: gone'],
    ],
  ];
  for (const [name, restore, outcome, code, states, restoreAction] of cases) {
    it(`rolled back, ${name}`, () => {
      const settled = rolledBackSettlement(
        template,
        { nodeId: 'node-01', expected: 'node-02' },
        restore,
        AT,
      );
      expect(settled.outcome).to.equal(outcome);
      expect(settled.receipt.outcome).to.equal('rolled-back');
      expect(settled.receipt.error).to.deep.equal({ code, message: settled.detail });
      expect(settled.detail).to.match(
        /^the controller did not come back with --node-id node-02: it runs with --node-id node-01 /,
      );
      expect(settled.receipt.files.map((file) => file.state)).to.deep.equal(states);
      expect(settled.receipt.actions.map((a) => [a.status, a.detail])).to.deep.equal([
        ['failed', 'restart pending; not settled: the controller runs with --node-id node-01'],
        ['ok', 'reloaded'],
        restoreAction,
      ]);
    });
  }
});
