/** Human renderings of plans and receipts (JSON output is the documents themselves). */
import type { DomainPlan, Receipt } from '@fleet/core';

type Escape = (text: string) => string;

export function renderPlan(plan: DomainPlan, escape: Escape): string {
  const lines = [
    `Plan for ${plan.domain} on ${plan.host} (repo commit ${plan.repoCommit.slice(0, 12)}):`,
  ];
  for (const file of plan.files) {
    const local = file.item.localLines
      ? `, ${file.item.localLines} local line${file.item.localLines === 1 ? '' : 's'}`
      : '';
    lines.push(
      `  ${file.item.state.padEnd(11)} ${escape(file.path)}  (live sha256 ${file.liveSha256?.slice(0, 12) ?? 'none'}${local})`,
    );
    if (file.item.detail) lines.push(`              ${escape(file.item.detail)}`);
    if (file.item.diff)
      lines.push(
        ...escape(file.item.diff)
          .split('\n')
          .map((line) => `      ${line}`),
      );
  }
  lines.push(
    plan.actions.length === 0
      ? '  coupled actions: none'
      : `  coupled actions: ${plan.actions.map((action) => action.kind).join(', ')}`,
  );
  lines.push(
    plan.changes
      ? '  an install would change this host'
      : '  nothing to install: every file is current',
  );
  return lines.join('\n');
}

export function renderReceipt(receipt: Receipt, escape: Escape): string {
  const lines = [
    `${receipt.outcome} ${receipt.domain} on ${receipt.host} (operation ${receipt.operationId}, verified: ${receipt.verified})`,
  ];
  for (const file of receipt.files) {
    lines.push(
      `  ${file.state.padEnd(9)} ${escape(file.path)}  ${file.beforeSha256?.slice(0, 12) ?? 'new'} → ${file.afterSha256.slice(0, 12)}${
        file.backupPath ? `  backup ${escape(file.backupPath)}` : ''
      }`,
    );
  }
  for (const action of receipt.actions)
    lines.push(`  action ${action.kind}: ${action.status} — ${escape(action.detail)}`);
  if (receipt.error) lines.push(`  error ${receipt.error.code}: ${escape(receipt.error.message)}`);
  return lines.join('\n');
}
