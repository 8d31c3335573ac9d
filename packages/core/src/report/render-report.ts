/**
 * Human forms of the drift report: Markdown for reading in a repo, and a self-contained HTML page
 * (no external assets, no scripts) whose first screen is a hosts × layers matrix and whose details
 * are one click away (`<details>`). Every value from a host is escaped: paths and diffs are data.
 */
import { DRIFT_LAYERS, layerState, type DriftReport } from './drift-report.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] as string);
}

/** Control characters shown escaped, so a hostile path cannot drive a terminal or forge lines. */
export function escapeControl(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

const escapeCell = (text: string) => escapeControl(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderDriftMarkdown(report: DriftReport): string {
  const { summary } = report;
  const lines = [
    `# Drift report — ${report.generatedAt}`,
    '',
    `Repository commit \`${report.repoCommit}\`, canonical version ${report.canonicalVersion}.`,
    `${summary.hosts} hosts: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.errors} errors.`,
    '',
    `| host | status | ${DRIFT_LAYERS.join(' | ')} |`,
    `|---|---|${DRIFT_LAYERS.map(() => '---').join('|')}|`,
    ...report.hosts.map(
      (host) =>
        `| ${escapeCell(host.host)} | ${host.status} | ${DRIFT_LAYERS.map((layer) => layerState(host, layer) ?? '—').join(' | ')} |`,
    ),
  ];
  for (const host of report.hosts) {
    const notable = host.items.filter((item) => item.state !== 'current');
    if (notable.length === 0 && host.status === 'current') continue;
    lines.push('', `## ${escapeControl(host.host)} — ${host.status}`);
    if (host.detail) lines.push('', escapeControl(host.detail));
    for (const item of notable) {
      const where = [item.domain, item.path].filter(Boolean).map((s) => escapeControl(String(s)));
      lines.push(
        '',
        `- **${item.state}** (${item.layer}) ${where.join(' ')}${
          item.detail
            ? `: ${escapeControl(item.detail)}`
            : item.localLines
              ? ` — ${item.localLines} local line${item.localLines === 1 ? '' : 's'}`
              : ''
        }`,
      );
      if (item.diff) {
        lines.push('', '```diff', escapeControl(item.diff.trimEnd()).replace(/```/g, '`‵`'), '```');
      }
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

export function renderDriftHtml(report: DriftReport): string {
  const { summary } = report;
  const rows = report.hosts
    .map((host) => {
      const cells = DRIFT_LAYERS.map((layer) => {
        const state = layerState(host, layer);
        return `<td>${state ? badge(state) : '<span class="n">—</span>'}</td>`;
      }).join('');
      return `<tr><th scope="row"><a href="#h-${escapeHtml(host.host)}">${escapeHtml(host.host)}</a></th><td>${badge(host.status)}</td>${cells}</tr>`;
    })
    .join('\n');
  const details = report.hosts
    .map((host) => {
      const items = host.items
        .map((item) => {
          const title = `${badge(item.state)} <code>${escapeHtml(item.layer)}</code> ${escapeHtml(item.domain ?? '')} <code>${escapeHtml(item.path ?? '')}</code>${
            item.localLines
              ? ` — ${item.localLines} local line${item.localLines === 1 ? '' : 's'}`
              : ''
          }`;
          const body = [
            item.detail ? `<p>${escapeHtml(item.detail)}</p>` : '',
            item.diff ? `<pre>${escapeHtml(item.diff)}</pre>` : '',
          ].join('');
          return body
            ? `<details><summary>${title}</summary>${body}</details>`
            : `<div class="i">${title}</div>`;
        })
        .join('\n');
      return `<section id="h-${escapeHtml(host.host)}"><h2>${escapeHtml(host.host)} ${badge(host.status)}</h2>${
        host.detail ? `<p>${escapeHtml(host.detail)}</p>` : ''
      }${items || '<p class="n">no items</p>'}</section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fleet drift — ${escapeHtml(report.generatedAt)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#212121}
table{border-collapse:collapse}th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:left}
.b{color:#fff;border-radius:.6rem;padding:0 .5rem;font-size:12px}.n{color:#9e9e9e}
section{margin-top:1.5rem}details,.i{margin:.3rem 0}pre{background:#f5f5f5;padding:.6rem;overflow:auto}
</style></head><body>
<h1>fleet drift report</h1>
<p>${escapeHtml(report.generatedAt)} · commit <code>${escapeHtml(report.repoCommit)}</code> · canonical version ${escapeHtml(report.canonicalVersion)}</p>
<p>${summary.hosts} hosts: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.errors} errors</p>
<table><thead><tr><th>host</th><th>status</th>${DRIFT_LAYERS.map((l) => `<th>${l}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
${details}
</body></html>
`;
}
