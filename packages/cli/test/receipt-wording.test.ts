/** A receipt's human first line names the fleet.yaml host (issue 17: after a node-id change). */
import { expect } from 'chai';
import { escapeControl, type Receipt } from '@fleet/core';
import { renderReceipt } from '@fleet/operator/config/render.js';

const receipt = (nodeId: string): Receipt => ({
  schema: 'fleet.receipt/v1',
  operationId: '01J0000000000000000000000A',
  host: nodeId,
  domain: 'router',
  outcome: 'installed',
  files: [],
  actions: [],
  verified: true,
  finishedAt: '2026-05-01T10:00:00.000Z',
  audit: { seq: 3, sha256: 'c'.repeat(64) },
});

describe('config install: the receipt line', () => {
  it('names the fleet.yaml host, and the node id beside it when they differ', () => {
    expect(renderReceipt(receipt('node-7f3a'), escapeControl, 'laptop')).to.equal(
      'installed router on laptop (node id node-7f3a) (operation 01J0000000000000000000000A, verified: true)',
    );
  });

  it('names the host once when the node id is the host', () => {
    expect(renderReceipt(receipt('laptop'), escapeControl, 'laptop')).to.equal(
      'installed router on laptop (operation 01J0000000000000000000000A, verified: true)',
    );
  });
});

describe('config install: a file whose mode changed (contract §10.4)', () => {
  it('says the mode before and after, beside the sha256s', () => {
    const file = {
      path: '~/.ssh/config',
      fileId: '~/.ssh/config',
      beforeSha256: 'a'.repeat(64),
      afterSha256: 'a'.repeat(64),
      backupPath: '~/.local/state/fleet/backups/files/x',
      diff: '',
      state: 'written' as const,
      mode: { before: '0644', after: '0600' },
    };
    const text = renderReceipt({ ...receipt('laptop'), files: [file] }, escapeControl, 'laptop');
    expect(text.split('\n')[1]).to.match(/~\/\.ssh\/config .* mode 0644 → 0600$/);
  });
});

describe('config install: a rolled-back receipt shows what is on disk (issue 40)', () => {
  const restored = (beforeSha256: string | null) => ({
    path: '~/.ssh/config',
    fileId: '~/.ssh/config',
    beforeSha256,
    afterSha256: 'b'.repeat(64),
    backupPath: null,
    diff: '',
    state: 'restored' as const,
    mode: { before: '0644', after: '0600' },
  });
  const line = (file: ReturnType<typeof restored>) =>
    renderReceipt(
      { ...receipt('laptop'), outcome: 'rolled-back', verified: false, files: [file] },
      escapeControl,
      'laptop',
    ).split('\n')[1];

  it('a restored file: the arrow ends at the old bytes, the undone write named beside it', () => {
    expect(line(restored('a'.repeat(64)))).to.equal(
      `  restored  ~/.ssh/config  ${'a'.repeat(12)} → ${'a'.repeat(12)} (the write of ${'b'.repeat(12)} undone)`,
    );
  });

  it('a created file that was removed again: the arrow ends at absent', () => {
    expect(line(restored(null))).to.equal(
      `  restored  ~/.ssh/config  new → absent (the write of ${'b'.repeat(12)} undone)`,
    );
  });
});
