import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildDriftReport,
  driftExitCode,
  driftReportSchema,
  failedHostStatus,
  hostStatus,
  layerState,
  type DriftHost,
} from '../src/report/drift-report.js';
import {
  escapeControl,
  renderDriftHtml,
  renderDriftMarkdown,
} from '../src/report/render-report.js';
import { datedReportDir, writeReportSet } from '../src/report/report-dir.js';
import type { ErrorCode, ExitCode } from '../src/errors.js';

const hosts: DriftHost[] = [
  {
    host: 'node-02',
    status: 'drifted',
    items: [
      { layer: 'file', domain: 'router', path: '~/.config/router/router.yaml', state: 'stale' },
      {
        layer: 'derived',
        domain: 'router',
        path: '~/.local/share/router/volume/router.yaml',
        state: 'current',
      },
      {
        layer: 'file',
        domain: 'harness-policy',
        path: '~/.claude/CLAUDE.md',
        state: 'diverged',
        localLines: 1,
        diff: '--- a\n+++ b\n@@ -1 +1 @@\n-x\n+<script>alert(1)</script>\n',
      },
    ],
  },
  {
    host: 'node-01',
    status: 'current',
    items: [{ layer: 'file', domain: 'router', state: 'current' }],
  },
  { host: 'node-03', status: 'unreachable', detail: 'connection refused', items: [] },
];

describe('drift report', () => {
  const report = buildDriftReport({
    generatedAt: new Date('2026-05-01T10:00:00Z'),
    repoCommit: 'abc123',
    canonicalVersion: '1.2.0',
    hosts,
  });

  it('is a valid fleet.drift/v1 document, hosts sorted, summary counted', () => {
    expect(driftReportSchema.parse(report)).to.deep.equal(report);
    expect(report.hosts.map((h) => h.host)).to.deep.equal(['node-01', 'node-02', 'node-03']);
    expect(report.summary).to.deep.equal({
      hosts: 3,
      current: 1,
      drifted: 1,
      unreachable: 1,
      denied: 0,
      errors: 0,
    });
    // An unreachable host outranks drift (contract §7).
    expect(driftExitCode(report)).to.equal(5);
    expect(
      driftExitCode(
        buildDriftReport({ ...report, generatedAt: new Date(), hosts: [hosts[1] as DriftHost] }),
      ),
    ).to.equal(0);
  });

  describe('exit code across hosts: the most urgent wins (contract §7)', () => {
    const entry = (host: string, status: DriftHost['status']): DriftHost => ({
      host,
      status,
      items: [],
    });
    const cases: [title: string, statuses: DriftHost['status'][], exit: number][] = [
      ['every host current', ['current', 'current'], 0],
      ['drift', ['current', 'drifted'], 1],
      ['an error item counts as drift found', ['error', 'current'], 1],
      ['unreachable over drift', ['drifted', 'unreachable'], 5],
      ['denied over unreachable and drift', ['unreachable', 'denied', 'drifted'], 4],
    ];
    for (const [title, statuses, exit] of cases) {
      it(`${title} → ${exit}, each host keeping its own state`, () => {
        const built = buildDriftReport({
          generatedAt: new Date(0),
          repoCommit: 'c',
          canonicalVersion: '1.0.0',
          hosts: statuses.map((status, i) => entry(`h${i}`, status)),
        });
        expect(driftExitCode(built)).to.equal(exit);
        expect(built.hosts.map((h) => h.status)).to.deep.equal(statuses);
        expect(built.summary.denied).to.equal(statuses.filter((s) => s === 'denied').length);
      });
    }

    const failures: [code: ErrorCode, exitCode: ExitCode, status: DriftHost['status']][] = [
      ['SCOPE_DENIED', 4, 'denied'],
      ['AUTH_INVALID', 4, 'denied'],
      ['AUTH_REVOKED', 4, 'denied'],
      ['CREDENTIALS_MISSING', 4, 'denied'],
      ['HOST_UNREACHABLE', 5, 'unreachable'],
      ['REQUEST_TIMEOUT', 5, 'unreachable'],
      ['DOMAIN_NOT_SERVED', 7, 'error'],
      ['INTERNAL', 1, 'error'],
    ];
    for (const [code, exitCode, status] of failures) {
      it(`a host whose read failed with ${code} is ${status}`, () => {
        expect(failedHostStatus({ code, message: 'm', exitCode })).to.equal(status);
      });
    }
  });

  it('derives host status and the worst state per layer', () => {
    expect(hostStatus([{ layer: 'file', state: 'current' }])).to.equal('current');
    expect(
      hostStatus([
        { layer: 'file', state: 'stale' },
        { layer: 'file', state: 'current' },
      ]),
    ).to.equal('drifted');
    expect(
      hostStatus([
        { layer: 'file', state: 'stale' },
        { layer: 'runtime', state: 'error' },
      ]),
    ).to.equal('error');
    expect(layerState(hosts[0] as DriftHost, 'file')).to.equal('diverged');
    expect(layerState(hosts[0] as DriftHost, 'derived')).to.equal('current');
    expect(layerState(hosts[0] as DriftHost, 'runtime')).to.equal(undefined);
  });

  it('renders Markdown with the matrix and the details of what is not current', () => {
    const md = renderDriftMarkdown(report);
    expect(md).to.contain('| node-02 | drifted | diverged | current | — | — |');
    expect(md).to.contain('3 hosts: 1 current, 1 drifted, 1 unreachable, 0 errors.');
    expect(md).to.contain('connection refused');
    expect(md).to.contain('— 1 local line');
    expect(md).to.not.contain('## node-01');
  });

  it('renders self-contained HTML with every host value escaped', () => {
    const html = renderDriftHtml(report);
    expect(html).to.match(/^<!doctype html>/);
    expect(html).to.not.match(/<script|src=|href="http/);
    expect(html).to.contain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).to.contain('<a href="#h-node-02">node-02</a>');
  });

  describe('the HTML report: problems first, current folded, diffs coloured (issue 17)', () => {
    const html = renderDriftHtml(report);
    const sections = html.split('<section id="h-').slice(1);
    const section = (host: string) => sections.find((s) => s.startsWith(`${host}"`)) ?? '';

    it('orders the host sections most urgent first; the matrix keeps the names order', () => {
      expect(sections.map((s) => s.slice(0, s.indexOf('"')))).to.deep.equal([
        'node-03',
        'node-02',
        'node-01',
      ]);
      const matrix = html.slice(html.indexOf('<tbody>'), html.indexOf('</tbody>'));
      expect([...matrix.matchAll(/<a href="#h-([^"]+)"/g)].map((m) => m[1])).to.deep.equal([
        'node-01',
        'node-02',
        'node-03',
      ]);
    });

    it("lists a host's problems before its current items, which are folded in one <details>", () => {
      const node02 = section('node-02');
      const stale = node02.indexOf('~/.config/router/router.yaml');
      const diverged = node02.indexOf('~/.claude/CLAUDE.md');
      const folded = node02.indexOf('<details class="current"><summary>1 current item</summary>');
      expect(stale).to.be.greaterThan(-1);
      expect(diverged).to.be.greaterThan(-1);
      expect(folded).to.be.greaterThan(Math.max(stale, diverged));
      expect(node02.slice(folded)).to.contain('~/.local/share/router/volume/router.yaml');
      expect(node02.slice(0, folded)).to.not.contain('~/.local/share/router/volume/router.yaml');
    });

    it('opens a problem with its diff, each line coloured by what it is, escaped', () => {
      expect(html).to.contain(
        '<pre class="diff"><span class="dh">--- a</span>\n<span class="dh">+++ b</span>\n<span class="dk">@@ -1 +1 @@</span>\n<span class="dd">-x</span>\n<span class="da">+&lt;script&gt;alert(1)&lt;/script&gt;</span></pre>',
      );
      expect(section('node-02')).to.match(/<details open><summary><span class="b"[^>]*>diverged/);
    });

    it("turns the messages' Markdown code spans into <code>: no backtick leaks", () => {
      const hinted = renderDriftHtml(
        buildDriftReport({
          generatedAt: new Date(0),
          repoCommit: 'abc123',
          canonicalVersion: '1.2.0',
          hosts: [
            {
              host: 'node-04',
              status: 'error',
              detail: 'run `fleet token issue --scope config:read` on <node-04>',
              items: [
                {
                  layer: 'file',
                  state: 'error',
                  path: '~/a',
                  detail: 'keep it with `fleet config adopt node-04 ~/a`',
                },
              ],
            },
          ],
        }),
      );
      expect(hinted).to.contain(
        '<p>run <code>fleet token issue --scope config:read</code> on &lt;node-04&gt;</p>',
      );
      expect(hinted).to.contain('<p>keep it with <code>fleet config adopt node-04 ~/a</code></p>');
      expect(hinted).to.not.contain('`');
    });
  });

  it('escapes control characters for terminals and logs', () => {
    expect(escapeControl('a\u001b[2Jb\rc')).to.equal('a\\x1b[2Jb\\x0dc');
    expect(escapeControl('line\nnext')).to.equal('line\nnext');
  });
});

describe('report directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-report-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('never overwrites an earlier report: -2, -3 for the whole set', async () => {
    const files = { json: '{}', md: '# r', html: '<html>' };
    await writeReportSet(dir, 'drift', files);
    await writeReportSet(dir, 'drift', { ...files, md: '# second' });
    await writeFile(join(dir, 'drift-3.md'), 'someone else');
    const third = await writeReportSet(dir, 'drift', files);
    expect(third.map((p) => p.slice(dir.length + 1))).to.deep.equal([
      'drift-4.json',
      'drift-4.md',
      'drift-4.html',
    ]);
    expect((await readdir(dir)).sort()).to.deep.equal([
      'drift-2.html',
      'drift-2.json',
      'drift-2.md',
      'drift-3.md',
      'drift-4.html',
      'drift-4.json',
      'drift-4.md',
      'drift.html',
      'drift.json',
      'drift.md',
    ]);
    expect(await readFile(join(dir, 'drift.md'), 'utf8')).to.equal('# r');
    expect(await readFile(join(dir, 'drift-2.md'), 'utf8')).to.equal('# second');
    expect(await readFile(join(dir, 'drift-3.md'), 'utf8')).to.equal('someone else');
  });

  it('dates report folders in UTC', () => {
    expect(datedReportDir('/r', 'drift', new Date('2026-05-01T23:30:00-02:00'))).to.equal(
      '/r/reports/drift/2026-05-02',
    );
  });
});
