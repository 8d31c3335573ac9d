/**
 * Human forms of the version report, as drift's (render-report.ts): Markdown for the repo, and a
 * self-contained HTML page (no external assets, no scripts) whose first screen is a hosts ×
 * (runtime, build, tools, PATH) matrix, details one click away. Every value from a host is escaped.
 */
import { escapeControl, escapeHtml } from './render-report.js';
import type { VersionHost, VersionItem, VersionReport } from './version-report.js';

const ORDER = ['error', 'diverged', 'unsupported', 'missing', 'stale', 'unmanaged', 'current'];
const COLUMNS = [
  ['runtime', 'runtime'],
  ['tools', 'tool'],
  ['PATH', 'shadowing'],
  ['launchd', 'launchd'],
] as const;

/** The worst state of a host's items of one kind (`undefined`: none). */
export function kindState(host: VersionHost, kind: VersionItem['kind']): string | undefined {
  const states = host.items.filter((item) => item.kind === kind).map((item) => item.state);
  if (states.length === 0) return undefined;
  return ORDER.find((state) => (states as string[]).includes(state));
}

const escapeCell = (text: string) => escapeControl(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function runtimeCell(host: VersionHost): string {
  if (!host.runtime) return '—';
  const build = host.runtime.build.sha256 ? host.runtime.build.sha256.slice(0, 12) : 'dev';
  return `${host.runtime.version} (${build})`;
}

function itemLine(item: VersionItem): string {
  return [
    item.name,
    item.path ? `\`${item.path}\`` : '',
    item.version ? `${item.version}` : '',
    item.expected && item.expected !== item.version ? `(canonical ${item.expected})` : '',
    item.detail ? `— ${item.detail}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

export function renderVersionMarkdown(report: VersionReport): string {
  const { summary } = report;
  const lines = [
    `# Version report — ${report.generatedAt}`,
    '',
    `Repository commit \`${report.repoCommit}\`, canonical version ${report.canonicalVersion}.`,
    `${summary.hosts} hosts: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.errors} errors.`,
    '',
    `| host | status | version (build) | ${COLUMNS.map(([title]) => title).join(' | ')} |`,
    `|---|---|---|${COLUMNS.map(() => '---').join('|')}|`,
    ...report.hosts.map(
      (host) =>
        `| ${escapeCell(host.host)} | ${host.status} | ${escapeCell(runtimeCell(host))} | ${COLUMNS.map(([, kind]) => kindState(host, kind) ?? '—').join(' | ')} |`,
    ),
  ];
  for (const host of report.hosts) {
    lines.push('', `## ${escapeControl(host.host)} — ${host.status}`);
    if (host.detail) lines.push('', escapeControl(host.detail));
    for (const item of host.items) {
      lines.push(
        `- **${item.state}** (${item.layer}, ${item.kind}) ${escapeControl(itemLine(item))}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const STATE_COLOURS: Record<string, string> = {
  current: '#2e7d32',
  stale: '#f9a825',
  missing: '#ef6c00',
  diverged: '#c62828',
  unmanaged: '#6d4c41',
  unsupported: '#6a1b9a',
  error: '#b71c1c',
  drifted: '#ef6c00',
  unreachable: '#455a64',
};

const badge = (state: string) =>
  `<span class="b" style="background:${STATE_COLOURS[state] ?? '#757575'}">${escapeHtml(state)}</span>`;

export function renderVersionHtml(report: VersionReport): string {
  const { summary } = report;
  const rows = report.hosts
    .map((host) => {
      const cells = COLUMNS.map(([, kind]) => {
        const state = kindState(host, kind);
        return `<td>${state ? badge(state) : '<span class="n">—</span>'}</td>`;
      }).join('');
      return `<tr><th scope="row"><a href="#h-${escapeHtml(host.host)}">${escapeHtml(host.host)}</a></th><td>${badge(host.status)}</td><td><code>${escapeHtml(runtimeCell(host))}</code></td>${cells}</tr>`;
    })
    .join('\n');
  const details = report.hosts
    .map((host) => {
      const items = host.items
        .map(
          (item) =>
            `<div class="i">${badge(item.state)} <code>${escapeHtml(item.layer)}</code> ${escapeHtml(item.kind)} ${escapeHtml(itemLine(item))}</div>`,
        )
        .join('\n');
      return `<section id="h-${escapeHtml(host.host)}"><h2>${escapeHtml(host.host)} ${badge(host.status)}</h2>${
        host.detail ? `<p>${escapeHtml(host.detail)}</p>` : ''
      }${items || '<p class="n">no items</p>'}</section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fleet version — ${escapeHtml(report.generatedAt)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#212121}
table{border-collapse:collapse}th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:left}
.b{color:#fff;border-radius:.6rem;padding:0 .5rem;font-size:12px}.n{color:#9e9e9e}
section{margin-top:1.5rem}.i{margin:.3rem 0}
</style></head><body>
<h1>fleet version report</h1>
<p>${escapeHtml(report.generatedAt)} · commit <code>${escapeHtml(report.repoCommit)}</code> · canonical version ${escapeHtml(report.canonicalVersion)}</p>
<p>${summary.hosts} hosts: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.errors} errors</p>
<table><thead><tr><th>host</th><th>status</th><th>version (build)</th>${COLUMNS.map(([title]) => `<th>${title}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
${details}
</body></html>
`;
}
