/**
 * Human forms of the version report, as drift's (render-report.ts): Markdown for the repo, and a
 * self-contained HTML page (no external assets, no scripts) whose first screen is a hosts ×
 * (runtime, build, tools, PATH) matrix, details one click away. Every value from a host is escaped.
 */
import { escapeHtml, reportPage, stateBadge } from './html.js';
import { escapeControl } from './render-report.js';
import {
  describeLoginPath,
  type VersionHost,
  type VersionItem,
  type VersionReport,
} from './version-report.js';

const ORDER = ['error', 'diverged', 'unsupported', 'missing', 'stale', 'unmanaged', 'current'];
const COLUMNS = [
  ['runtime', 'runtime'],
  ['tools', 'tool'],
  ['PATH', 'shadowing'],
  ['plugins', 'plugin'],
  ['launchd', 'launchd'],
  ['supervisor', 'supervisor'],
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
    if (host.runtime?.loginPath) {
      lines.push('', escapeControl(describeLoginPath(host.runtime.loginPath)), '');
    }
    for (const item of host.items) {
      lines.push(
        `- **${item.state}** (${item.layer}, ${item.kind}) ${escapeControl(itemLine(item))}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const badge = stateBadge;

export function renderVersionHtml(report: VersionReport): string {
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
  return reportPage({
    kind: 'version',
    generatedAt: report.generatedAt,
    repoCommit: report.repoCommit,
    canonicalVersion: report.canonicalVersion,
    summary: report.summary,
    columns: ['version (build)', ...COLUMNS.map(([title]) => title)],
    rows,
    details,
  });
}
