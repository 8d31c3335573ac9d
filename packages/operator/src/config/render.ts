/** Human renderings of plans and receipts (JSON output is the documents themselves). */
import type { ApplyDocument, ApplyHostResult, DomainPlan, Receipt } from '@fleet/core';
import { plainPalette, type Palette } from '@fleet/core/command';

type Escape = (text: string) => string;

/** A state word padded to `width` (at least one blank after it), coloured without misaligning. */
function stateCell(palette: Palette, state: string, width: number): string {
  return `${palette.state(state)}${' '.repeat(Math.max(1, width + 1 - state.length))}`;
}

export function renderPlan(
  plan: DomainPlan,
  escape: Escape,
  palette: Palette = plainPalette,
): string {
  const lines = [
    `Plan for ${plan.domain} on ${plan.host} (repo commit ${plan.repoCommit.slice(0, 12)}):`,
  ];
  for (const file of plan.files) {
    const local = file.item.localLines
      ? `, ${file.item.localLines} local line${file.item.localLines === 1 ? '' : 's'}`
      : '';
    lines.push(
      `  ${stateCell(palette, file.item.state, 11)}${escape(file.path)}  (live sha256 ${file.liveSha256?.slice(0, 12) ?? 'none'}${local})`,
    );
    if (file.item.detail) lines.push(`              ${escape(file.item.detail)}`);
    if (file.item.diff)
      lines.push(
        ...palette
          .diff(escape(file.item.diff))
          .split('\n')
          .map((line) => `      ${line}`),
      );
  }
  // The derived layer an install writes with the files (the router's volume), as drift reads it.
  for (const item of plan.derived ?? []) {
    lines.push(
      `  ${stateCell(palette, item.state, 11)}${escape(item.path ?? plan.domain)}  (derived)`,
    );
    if (item.detail && item.state !== 'current') lines.push(`              ${escape(item.detail)}`);
  }
  lines.push(
    plan.actions.length === 0
      ? '  coupled actions: none'
      : `  coupled actions: ${plan.actions.map((action) => action.kind).join(', ')}`,
  );
  // A file that cannot be installed (the node's refusal, a render error) says so, not "change".
  const blocked = plan.files.find((file) => file.code !== undefined);
  lines.push(
    blocked
      ? `  an install would be refused: ${blocked.code ?? ''} (${escape(blocked.path)})`
      : plan.changes
        ? '  an install would change this host'
        : '  nothing to install: every file is current',
  );
  return lines.join('\n');
}

/**
 * A receipt file's sha256s: before → what is on disk now. A restored file holds its old bytes
 * again (or is gone, when the install had created it): the arrow ends there, and the write that
 * was undone is named beside it — never as if it were on disk.
 */
function shaArrow(file: Receipt['files'][number]): string {
  const before = file.beforeSha256?.slice(0, 12);
  const after = file.afterSha256.slice(0, 12);
  if (file.state !== 'restored') return `${before ?? 'new'} → ${after}`;
  return `${before ?? 'new'} → ${before ?? 'absent'} (the write of ${after} undone)`;
}

/**
 * A receipt's lines. `host` is the fleet.yaml host the operator named; the receipt's own `host` is
 * the node id the node signs it with, shown beside it when the two differ (after a node-id change).
 */
export function renderReceipt(
  receipt: Receipt,
  escape: Escape,
  host: string,
  palette: Palette = plainPalette,
): string {
  const node = receipt.host === host ? '' : ` (node id ${escape(receipt.host)})`;
  const lines = [
    `${palette.state(receipt.outcome)} ${receipt.domain} on ${escape(host)}${node} (operation ${receipt.operationId}, verified: ${receipt.verified})`,
  ];
  for (const file of receipt.files) {
    lines.push(
      `  ${file.state.padEnd(9)} ${escape(file.path)}  ${shaArrow(file)}${
        file.backupPath ? `  backup ${escape(file.backupPath)}` : ''
      }${
        // A files entry's mode (contract §10.4): said when it changed, and not for a write undone.
        file.mode && file.mode.before !== file.mode.after && file.state !== 'restored'
          ? `  mode ${file.mode.before ?? 'new'} → ${file.mode.after}`
          : ''
      }`,
    );
  }
  for (const action of receipt.actions)
    lines.push(
      `  action ${action.kind}: ${palette.state(action.status)} — ${escape(action.detail)}`,
    );
  if (receipt.error) lines.push(`  error ${receipt.error.code}: ${escape(receipt.error.message)}`);
  return lines.join('\n');
}

/**
 * One host's line of `fleet apply` (printed as the host settles), with an indented line per file
 * that is not current: what apply does with it, its drift state, and for a receipt what the node
 * did.
 */
export function renderApplyHost(
  host: ApplyHostResult,
  escape: Escape,
  palette: Palette = plainPalette,
): string {
  const error = host.error ? `  ${host.error.code}: ${escape(host.error.message)}` : '';
  const lines = [`${host.host.padEnd(12)} ${palette.state(host.outcome)}${error}`];
  for (const domain of host.domains) {
    const written = new Map(domain.receipt?.files.map((file) => [file.path, file.state]) ?? []);
    for (const file of domain.files) {
      if (file.decision === 'current') continue;
      const local = file.localLines
        ? `  (${file.localLines} local line${file.localLines === 1 ? '' : 's'})`
        : '';
      const done = written.get(file.path);
      const why = file.decision === 'blocked' && file.detail ? `  ${escape(file.detail)}` : '';
      lines.push(
        `    ${stateCell(palette, file.decision, 8)}${stateCell(palette, file.state, 11)}${escape(file.path)}${local}${done ? `  ${done}` : ''}${why}`,
      );
    }
    if (domain.error)
      lines.push(`    ${domain.domain}: ${domain.error.code}: ${escape(domain.error.message)}`);
    else if (domain.receipt)
      lines.push(
        `    ${domain.domain}: ${domain.receipt.outcome} (operation ${domain.receipt.operationId}, verified: ${domain.receipt.verified})`,
      );
  }
  return lines.join('\n');
}

/** The closing lines of `fleet apply`: counts, and what to do next. */
export function renderApplySummary(document: ApplyDocument): string {
  const { summary } = document;
  const lines = [
    `${summary.hosts} host${summary.hosts === 1 ? '' : 's'}: ${summary.install} file${summary.install === 1 ? '' : 's'} to install, ${summary.refused} refused, ${summary.blocked} blocked; ${
      document.confirmed
        ? `${summary.installed} installed, ${summary.failed} failed, ${summary.unreachable} unreachable`
        : `${summary.unreachable} unreachable`
    } (commit ${document.repoCommit.slice(0, 12)})`,
  ];
  if (summary.refused > 0)
    lines.push(
      'refused: hand changes (diverged, modified) and removed files (deleted) are never replaced without --force; keep them with `fleet config adopt HOST PATH`, or overwrite with --force',
    );
  return lines.join('\n');
}
