/** Human output (each host's lines as it settles, then the closing lines) and rolling-log lines of a reconcile run (the JSON output is the document itself). */
import type { ReconcileDocument, ReconcileHost } from './model.js';

type Escape = (text: string) => string;

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

/** One host's lines: its state, and a line per target that is not current (with what to do). */
export function renderHost(host: ReconcileHost, escape: Escape): string {
  const lines: string[] = [];
  const extra = [
    host.pendingSince ? `pending since ${host.pendingSince}` : '',
    host.operationId ? `operation ${host.operationId}` : '',
  ].filter(Boolean);
  lines.push(
    `${host.host.padEnd(12)} ${host.state}${extra.length > 0 ? `  (${extra.join(', ')})` : ''}`,
  );
  if (host.detail && host.state !== 'current' && host.state !== 'updated')
    lines.push(`    ${escape(host.detail)}`);
  for (const target of host.targets) {
    if (target.state === 'current') continue;
    const local = target.localLines > 0 ? `  (${plural(target.localLines, 'local line')})` : '';
    lines.push(`    ${targetState(target).padEnd(24)} ${escape(target.path)}${local}`);
    if (target.state === 'diverged' || target.state === 'modified') {
      lines.push(
        `        a hand change, never written by reconcile: review it, then \`fleet config adopt ${host.host} ${target.path}\` (\`--promote\` to make it the canonical) or install it with --force`,
      );
    } else if (target.state === 'deleted') {
      lines.push(
        `        someone removed it; never recreated by reconcile: \`fleet config install ${host.host} harness-policy --file ${target.path} --confirm --force\` recreates it`,
      );
    } else if (target.state === 'error' && target.detail) {
      lines.push(`        ${escape(target.detail)}`);
    }
  }
  return lines.join('\n');
}

/** The closing lines of a run: counts per state, and what to do next. */
export function renderClosing(document: ReconcileDocument): string {
  const lines: string[] = [];
  const { summary } = document;
  const parts = (
    [
      'current',
      'updated',
      'would-update',
      'deleted',
      'modified',
      'diverged',
      'offline_pending',
      'error',
    ] as const
  )
    .filter((state) => summary[state] > 0)
    .map((state) => `${summary[state]} ${state}`);
  lines.push(
    `${plural(summary.hosts, 'host')}: ${parts.length > 0 ? parts.join(', ') : 'none'} (canonical CLAUDE.md ${document.canonicalSha.slice(0, 12)}, commit ${document.repoCommit.slice(0, 12)}, ${document.mode})`,
  );
  if (document.mode === 'dry-run' && summary['would-update'] > 0) {
    lines.push(
      `nothing written: run again with --confirm to update ${plural(summary['would-update'], 'host')}`,
    );
  }
  return lines.join('\n');
}

function hostLine(now: string, mode: string, host: ReconcileHost, escape: Escape): string {
  const fields = [now, mode, host.host, host.state];
  if (host.operationId) fields.push(`op=${host.operationId}`);
  if (host.pendingSince) fields.push(`since=${host.pendingSince}`);
  const changed = host.targets.filter((target) => target.state !== 'current');
  if (changed.length > 0) fields.push(changed.map((t) => `${t.path}=${t.state}`).join(','));
  if (host.detail && host.state !== 'current' && host.state !== 'updated')
    fields.push(`-- ${host.detail}`);
  return escape(fields.join(' '));
}

/** The run's lines for the rolling log: one per host, then a summary line. */
export function logLines(document: ReconcileDocument, exitCode: number, escape: Escape): string[] {
  const now = document.generatedAt;
  const { summary } = document;
  const counts = (
    [
      'current',
      'updated',
      'would-update',
      'deleted',
      'modified',
      'diverged',
      'offline_pending',
      'error',
    ] as const
  )
    .map((state) => `${state}=${summary[state]}`)
    .join(' ');
  return [
    ...document.hosts.map((host) => hostLine(now, document.mode, host, escape)),
    escape(
      `${now} ${document.mode} run canonical=${document.canonicalSha.slice(0, 16)} commit=${document.repoCommit.slice(0, 12)} hosts=${summary.hosts} ${counts} exit=${exitCode}`,
    ),
  ];
}

/** The rolling log's line for a refused run (nothing else is written). */
export function refusalLine(
  now: string,
  mode: string,
  code: string,
  message: string,
  escape: Escape,
): string {
  return escape(`${now} ${mode} refused ${code}: ${message}`);
}

/**
 * A target's state, with its drift classification when that says more (`would-update (stale)`);
 * `diverged`, `modified` and `deleted` are their own classification and are said once.
 */
export function targetState(target: { readonly state: string; readonly drift: string }): string {
  return target.state === target.drift ? target.state : `${target.state} (${target.drift})`;
}
