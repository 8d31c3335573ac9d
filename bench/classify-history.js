// History-aware classification (contract §8.2, §14): a 300-line canonical file with 1,000
// published versions, classified against live files — reading the history from git (one
// `git log`, one `git cat-file --batch`), indexing it, and classifying a stale and a diverged live
// file; then, timed apart, a modified one (one line deleted) and one fleet wrote from a branch
// (known by the node's record). Measured side by side with the same file holding one version:
// the difference is what the history adds. Reference figures, with no goal of their own: this
// pass reads git and indexes every time, which a warm drift skips; contract §14's history goal is
// the history row of bench/drift-fleet.js (bench/README.md).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderTable, repoRoot, round, summarize } from './lib.js';

export const name = 'classify-history';
export const description =
  'classify a live file against 1,000 versions of a 300-line canonical file, git included (contract §14)';

const VERSIONS = 1000;
const LINES = 300;
const FILE = 'domains/harness-policy/CLAUDE.md';

/** Deterministic pseudo-random numbers, so every run builds the same history. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The 1,000 versions: each edits a few lines; every 100th rewrites a third of the file. */
function buildVersions() {
  const random = prng(42);
  // One line in ten holds a host placeholder, as real policy and config files do.
  let lines = Array.from({ length: LINES }, (_, i) =>
    i % 10 === 0 ? `- policy line ${i} for {{ host.node_id }}` : `- policy line ${i}`,
  );
  const versions = [];
  for (let v = 0; v < VERSIONS; v += 1) {
    const edits = v % 100 === 99 ? LINES / 3 : 5;
    lines = [...lines];
    for (let e = 0; e < edits; e += 1) {
      lines[Math.floor(random() * LINES)] = `- rule ${v}.${e}: ${random().toString(36).slice(2)}`;
    }
    versions.push(`${lines.join('\n')}\n`);
  }
  return versions;
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** A repository with one commit per version, written in one `git fast-import`. */
function buildRepo(dir, versions) {
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  let stream = '';
  versions.forEach((content, i) => {
    const data = Buffer.from(content);
    stream +=
      `commit refs/heads/main\nmark :${i + 1}\ncommitter bench <bench@localhost> ${1700000000 + i * 60} +0000\n` +
      `data ${`v${i}`.length}\nv${i}\n${i > 0 ? `from :${i}\n` : ''}` +
      `M 100644 inline ${FILE}\ndata ${data.length}\n${content}\n`;
  });
  execFileSync('git', ['-C', dir, 'fast-import', '--quiet'], { input: stream });
  execFileSync('git', ['-C', dir, 'reset', '-q', '--hard', 'main']);
}

/** One timed pass: history read and indexed, four live files classified. */
async function pass(core, git, versions, variables) {
  const render = (text) => text.replaceAll('{{ host.node_id }}', variables.node_id);
  const last = versions.length - 1;
  const desired = render(versions[last]);
  const stale = render(versions[Math.max(0, last - 300)]);
  const diverged = `${stale}a line nobody published\n`;
  const modified = stale.split('\n').slice(1).join('\n');
  const branch = `${desired}a rule only a branch had\n`;
  const writes = [
    {
      sha256: sha256(branch),
      at: '2026-05-01T00:00:00.000Z',
      operationId: '01J00000000000000000000001',
    },
  ];
  const start = process.hrtime.bigint();
  const history = await core.readCanonicalHistory(git, [FILE]);
  const index = new core.HistoryIndex(history.get(FILE));
  const known = index.forHost(variables);
  const want = { source: { kind: 'commit', commit: 'HEAD' }, content: desired };
  const live = (text, w = []) => ({ managed: text, sha256: sha256(text), writes: w });
  const a = core.classify(live(stale), want, known);
  const b = core.classify(live(diverged), want, known);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // What the states added since cost, timed apart: describing a modified file (against the
  // closest of the 1,000 versions) and recognising fleet's own write from the node's record.
  const extraStart = process.hrtime.bigint();
  const c = core.classify(live(modified), want, known);
  const d = core.classify(live(branch, writes), want, known);
  const extraMs = Number(process.hrtime.bigint() - extraStart) / 1e6;
  const expectStale = versions.length > 1 ? 'stale' : 'current';
  if (a.state !== expectStale || b.state !== 'diverged' || b.localLines !== 1) {
    throw new Error(`wrong classification: ${a.state}/${b.state}`);
  }
  if (
    c.state !== 'modified' ||
    c.deleted.length !== 1 ||
    d.state !== 'stale' ||
    d.equals.kind !== 'installed'
  ) {
    throw new Error(`wrong classification: ${c.state}/${d.state}`);
  }
  return { ms, extraMs, versions: index.size };
}

export async function run({ runs = 15, warmups = 2 } = {}) {
  const core = await import(
    pathToFileURL(path.join(repoRoot, 'packages/core/dist/src/index.js')).href
  );
  const deep = mkdtempSync(path.join(tmpdir(), 'fleet-bench-history-'));
  const shallow = mkdtempSync(path.join(tmpdir(), 'fleet-bench-history-1-'));
  try {
    const versions = buildVersions();
    buildRepo(deep, versions);
    buildRepo(shallow, versions.slice(-1));
    const variables = { node_id: 'node-0042' };
    const gits = { deep: core.createGit(deep), shallow: core.createGit(shallow) };
    for (let i = 0; i < warmups; i += 1) {
      await pass(core, gits.deep, versions, variables);
      await pass(core, gits.shallow, versions.slice(-1), variables);
    }
    const samples = { deep: [], shallow: [], extra: [] };
    let indexed = 0;
    // Interleaved, so load on the machine hits both sides alike.
    for (let i = 0; i < runs; i += 1) {
      const deepPass = await pass(core, gits.deep, versions, variables);
      samples.deep.push(deepPass.ms);
      samples.extra.push(deepPass.extraMs);
      indexed = deepPass.versions;
      samples.shallow.push((await pass(core, gits.shallow, versions.slice(-1), variables)).ms);
    }
    const stats = summarize(samples.deep);
    const one = summarize(samples.shallow);
    const extra = summarize(samples.extra);
    const addedMs = stats.medianMs - one.medianMs;
    return {
      name,
      description,
      ok: indexed === VERSIONS,
      over: false,
      versions: indexed,
      lines: LINES,
      runs,
      medianMs: round(stats.medianMs),
      minMs: round(stats.minMs),
      maxMs: round(stats.maxMs),
      oneVersionMedianMs: round(one.medianMs),
      addedMs: round(addedMs),
      modifiedAndInstalledMs: round(extra.medianMs),
    };
  } finally {
    rmSync(deep, { recursive: true, force: true });
    rmSync(shallow, { recursive: true, force: true });
  }
}

export function format(result) {
  const columns = [
    { key: 'case', label: 'case', align: 'left' },
    { key: 'median', label: 'median', align: 'right' },
    { key: 'range', label: 'min–max ms', align: 'right' },
  ];
  const rows = [
    {
      case: `${result.versions} versions × ${result.lines} lines, ${result.runs} runs`,
      median: `${result.medianMs} ms`,
      range: `${result.minMs}–${result.maxMs}`,
    },
    {
      case: 'then a modified file and one fleet wrote (1,000 versions)',
      median: `${result.modifiedAndInstalledMs} ms`,
      range: '',
    },
    {
      case: `added by the history (vs 1 version: ${result.oneVersionMedianMs} ms)`,
      median: `${result.addedMs} ms`,
      range: '',
    },
  ];
  return renderTable(columns, rows);
}
