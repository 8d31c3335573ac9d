// History-aware classification (contract §14): a 300-line canonical file with 1,000 published
// versions on the main line, classified against a live file — reading the history from git
// (one `git log`, one `git cat-file --batch`), indexing it, and classifying a stale and a diverged
// live file. Goal: ≤ 1 s including git.
import { execFileSync } from 'node:child_process';
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
const GOAL_MS = 1000;
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

export async function run({ runs = 15, warmups = 2 } = {}) {
  const core = await import(
    pathToFileURL(path.join(repoRoot, 'packages/core/dist/src/index.js')).href
  );
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-history-'));
  try {
    const versions = buildVersions();
    buildRepo(dir, versions);
    const variables = { node_id: 'node-0042' };
    const render = (text) => text.replaceAll('{{ host.node_id }}', variables.node_id);
    const desired = render(versions[VERSIONS - 1]);
    const stale = render(versions[VERSIONS - 300]);
    const diverged = `${stale}a line nobody published\n`;
    const git = core.createGit(dir);
    const once = async () => {
      const start = process.hrtime.bigint();
      const history = await core.readCanonicalHistory(git, [FILE]);
      const index = new core.HistoryIndex(history.get(FILE));
      const published = index.forHost(variables);
      const a = core.classify(stale, desired, published);
      const b = core.classify(diverged, desired, published);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (
        a.state !== 'stale' ||
        a.equals === null ||
        b.state !== 'diverged' ||
        b.localLines !== 1
      ) {
        throw new Error(`wrong classification: ${a.state}/${b.state}`);
      }
      return { ms, versions: index.size };
    };
    for (let i = 0; i < warmups; i += 1) await once();
    const samples = [];
    let indexed = 0;
    for (let i = 0; i < runs; i += 1) {
      const { ms, versions: count } = await once();
      samples.push(ms);
      indexed = count;
    }
    const stats = summarize(samples);
    return {
      name,
      description,
      ok: indexed === VERSIONS,
      over: stats.medianMs > GOAL_MS,
      versions: indexed,
      lines: LINES,
      runs,
      medianMs: round(stats.medianMs),
      minMs: round(stats.minMs),
      maxMs: round(stats.maxMs),
      goalMs: GOAL_MS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function format(result) {
  const columns = [
    { key: 'case', label: 'case', align: 'left' },
    { key: 'median', label: 'median', align: 'right' },
    { key: 'range', label: 'min–max ms', align: 'right' },
    { key: 'goal', label: 'goal', align: 'right' },
    { key: 'result', label: 'result', align: 'left' },
  ];
  const row = {
    case: `${result.versions} versions × ${result.lines} lines, ${result.runs} runs`,
    median: `${result.medianMs} ms`,
    range: `${result.minMs}–${result.maxMs}`,
    goal: `≤ ${result.goalMs} ms`,
    result: result.over ? 'OVER' : 'PASS',
  };
  return renderTable(columns, [row]);
}
