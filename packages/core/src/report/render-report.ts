/**
 * Human forms of the drift report: Markdown for reading in a repo, and a self-contained HTML page
 * (no external assets, no scripts) whose first screen is a hosts × layers matrix and whose details
 * are one click away (`<details>`). Every value from a host is escaped: paths and diffs are data.
 */
import type { DriftItem } from '../interfaces/drift.js';
import { DRIFT_LAYERS, layerState, type DriftHost, type DriftReport } from './drift-report.js';
import { escapeControl } from './escape-control.js';
import { diffHtml, escapeHtml, proseHtml, reportPage, stateBadge } from './html.js';

export { escapeHtml } from './html.js';

export { escapeControl };

const escapeCell = (text: string) => escapeControl(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderDriftMarkdown(report: DriftReport): string {
  const { summary } = report;
  const lines = [
    `# Drift report — ${report.generatedAt}`,
    '',
    `Repository commit \`${report.repoCommit}\` (fleet.yaml, hosts/ and domains/ as committed), canonical version ${report.canonicalVersion}.`,
    ...(report.uncommitted && report.uncommitted.length > 0
      ? [
          '',
          `**Not in this report** (uncommitted): ${report.uncommitted.map((p) => `\`${escapeCell(p)}\``).join(', ')}.`,
        ]
      : []),
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

const badge = stateBadge;

/** How much a host's status asks of the reader: the HTML report's sections go most urgent first. */
const HOST_URGENCY: readonly DriftHost['status'][] = [
  'denied',
  'error',
  'unreachable',
  'drifted',
  'current',
];

function hostItemHtml(item: DriftItem): string {
  const title = `${badge(item.state)} <code>${escapeHtml(item.layer)}</code> ${escapeHtml(item.domain ?? '')} <code>${escapeHtml(item.path ?? '')}</code>${
    item.localLines ? ` — ${item.localLines} local line${item.localLines === 1 ? '' : 's'}` : ''
  }`;
  const body = [
    item.detail ? `<p>${proseHtml(item.detail)}</p>` : '',
    item.diff ? diffHtml(item.diff) : '',
  ].join('');
  return body
    ? `<details${item.state === 'current' ? '' : ' open'}><summary>${title}</summary>${body}</details>`
    : `<div class="i">${title}</div>`;
}

/**
 * One host's section: what is not current first, each open with its reason and diff; the current
 * items folded under one `<details>`, so problems are what the page shows.
 */
function hostSectionHtml(host: DriftHost): string {
  const problems = host.items.filter((item) => item.state !== 'current');
  const current = host.items.filter((item) => item.state === 'current');
  const folded =
    current.length === 0
      ? ''
      : `<details class="current"><summary>${current.length} current item${current.length === 1 ? '' : 's'}</summary>${current.map(hostItemHtml).join('\n')}</details>`;
  const items = [...problems.map(hostItemHtml), folded].filter(Boolean).join('\n');
  return `<section id="h-${escapeHtml(host.host)}"><h2>${escapeHtml(host.host)} ${badge(host.status)}</h2>${
    host.detail ? `<p>${proseHtml(host.detail)}</p>` : ''
  }${items || '<p class="n">no items</p>'}</section>`;
}

export function renderDriftHtml(report: DriftReport): string {
  const rows = report.hosts
    .map((host) => {
      const cells = DRIFT_LAYERS.map((layer) => {
        const state = layerState(host, layer);
        return `<td>${state ? badge(state) : '<span class="n">—</span>'}</td>`;
      }).join('');
      return `<tr><th scope="row"><a href="#h-${escapeHtml(host.host)}">${escapeHtml(host.host)}</a></th><td>${badge(host.status)}</td>${cells}</tr>`;
    })
    .join('\n');
  // The matrix keeps the hosts' order (by name); the sections below go problems first.
  const urgency = (host: DriftHost) => HOST_URGENCY.indexOf(host.status);
  const details = [...report.hosts]
    .sort((a, b) => urgency(a) - urgency(b))
    .map(hostSectionHtml)
    .join('\n');
  return reportPage({
    kind: 'drift',
    generatedAt: report.generatedAt,
    repoCommit: report.repoCommit,
    canonicalVersion: report.canonicalVersion,
    summary: report.summary,
    columns: DRIFT_LAYERS,
    rows,
    details,
    ...(report.uncommitted && report.uncommitted.length > 0
      ? {
          notice: `Not in this report (uncommitted): ${report.uncommitted.map((p) => escapeHtml(p)).join(', ')}`,
        }
      : {}),
  });
}
