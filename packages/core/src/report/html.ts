/**
 * What the HTML reports (drift, version) share: the state colours, a state badge and the
 * self-contained page around a hosts × columns matrix. No external assets, no scripts; every value
 * from a host is escaped by the caller with `escapeHtml` before it gets here.
 */
const STATE_COLOURS: Readonly<Record<string, string>> = {
  current: '#2e7d32',
  stale: '#f9a825',
  missing: '#ef6c00',
  deleted: '#ad1457',
  modified: '#d84315',
  diverged: '#c62828',
  unmanaged: '#6d4c41',
  unsupported: '#6a1b9a',
  error: '#b71c1c',
  drifted: '#ef6c00',
  unreachable: '#455a64',
};

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] as string);
}

/**
 * A one-line message for the page: escaped, and its Markdown code spans (`fleet config adopt …`,
 * as the CLI's messages write commands) made `<code>`, so no backtick leaks into the HTML.
 */
export function proseHtml(text: string): string {
  return escapeHtml(text).replace(/`([^`\n]+)`/g, '<code>$1</code>');
}

const DIFF_LINE_CLASSES: readonly [prefix: string, className: string][] = [
  ['+++', 'dh'],
  ['---', 'dh'],
  ['@@', 'dk'],
  ['+', 'da'],
  ['-', 'dd'],
];

/** A unified diff, escaped, each line in the colour of what it is (added, removed, hunk header). */
export function diffHtml(diff: string): string {
  const lines = diff
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => {
      const match = DIFF_LINE_CLASSES.find(([prefix]) => line.startsWith(prefix));
      return match ? `<span class="${match[1]}">${escapeHtml(line)}</span>` : escapeHtml(line);
    });
  return `<pre class="diff">${lines.join('\n')}</pre>`;
}

/** A coloured badge naming a state. */
export function stateBadge(state: string): string {
  return `<span class="b" style="background:${STATE_COLOURS[state] ?? '#757575'}">${escapeHtml(state)}</span>`;
}

export interface ReportPage {
  /** `drift`, `version`: names the page. */
  readonly kind: string;
  readonly generatedAt: string;
  readonly repoCommit: string;
  readonly canonicalVersion: string;
  readonly summary: {
    readonly hosts: number;
    readonly current: number;
    readonly drifted: number;
    readonly unreachable: number;
    readonly errors: number;
  };
  /** Header cells after `host` and `status` (already escaped). */
  readonly columns: readonly string[];
  /** `<tr>` rows of the matrix (already escaped). */
  readonly rows: string;
  /** Per-host sections below the matrix (already escaped). */
  readonly details: string;
  /** A line under the header (already escaped), e.g. what the report did not read. */
  readonly notice?: string;
}

/** The whole self-contained page: the matrix first, the details one click or scroll away. */
export function reportPage(page: ReportPage): string {
  const { summary } = page;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fleet ${escapeHtml(page.kind)} — ${escapeHtml(page.generatedAt)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#212121}
table{border-collapse:collapse}th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:left}
.b{color:#fff;border-radius:.6rem;padding:0 .5rem;font-size:12px}.n{color:#9e9e9e}
section{margin-top:1.5rem}details,.i{margin:.3rem 0}pre{background:#f5f5f5;padding:.6rem;overflow:auto}
details.current>summary{color:#616161}.da{color:#2e7d32;background:#e8f5e9}.dd{color:#c62828;background:#ffebee}.dk{color:#1565c0}.dh{font-weight:bold}
</style></head><body>
<h1>fleet ${escapeHtml(page.kind)} report</h1>
<p>${escapeHtml(page.generatedAt)} · commit <code>${escapeHtml(page.repoCommit)}</code> · canonical version ${escapeHtml(page.canonicalVersion)}</p>
${page.notice ? `<p><strong>${page.notice}</strong></p>\n` : ''}<p>${summary.hosts} hosts: ${summary.current} current, ${summary.drifted} drifted, ${summary.unreachable} unreachable, ${summary.errors} errors</p>
<table><thead><tr><th>host</th><th>status</th>${page.columns.map((column) => `<th>${column}</th>`).join('')}</tr></thead>
<tbody>
${page.rows}
</tbody></table>
${page.details}
</body></html>
`;
}
