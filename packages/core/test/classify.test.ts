/**
 * The classification table (contract §8.2, docs/classification.md): every state, and every case of
 * the issue, each named after the peer behaviour it follows or deliberately differs from — Debian
 * ucf (its test suite's table and its hashfile), dpkg's conffile handling (`configure.c`:
 * useredited × distedited), Ansible blockinfile (integration tests and bug reports), and the
 * field report fleet was derived from. Pure: no git, no node.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  PublishedLines,
  classify,
  splitLines,
  type Classification,
  type FleetWrite,
  type KnownVersion,
} from '../src/classify/classify.js';
import {
  classifyMode,
  defaultFileMode,
  type ModeClassification,
  type ModeFacts,
} from '../src/classify/attributes.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const commit = (id: string) => ({ kind: 'commit', commit: id }) as const;
const installed = (w: FleetWrite) =>
  ({ kind: 'installed', at: w.at, operationId: w.operationId }) as const;
const write = (content: string, n: number): FleetWrite => ({
  sha256: sha(content),
  at: `2026-05-0${n}T10:00:00.000Z`,
  operationId: `01J00000000000000000000${String(n).padStart(3, '0')}`,
});

/** A policy through four releases on the main line; v4 (desired) rewrites most lines. */
const v1 = '# Policy v1\n- be careful\n- commit often\n- no secrets\n';
const v2 = '# Policy v2\n- be careful\n- commit often\n- no secrets\n- review diffs\n';
const v3 = '# Policy v3\n- be careful\n- commit small steps\n- no secrets\n- review diffs\n';
const v4 =
  '# Policy v4\n- think first\n- small reviewed steps\n- secrets by name only\n- ask before deleting\n';
const history: KnownVersion[] = [
  { source: commit('c4'), content: v4 },
  { source: commit('c3'), content: v3 },
  { source: commit('c2'), content: v2 },
  { source: commit('c1'), content: v1 },
];
const known = new PublishedLines(history);
const desired: KnownVersion = { source: commit('c4'), content: v4 };

/** Content fleet wrote from a feature branch (never on the main line), and a hand edit. */
const branch = `${v4}- branch-only rule\n`;
const handEdit = `${v4}- my own rule\n`;

interface Case {
  readonly name: string;
  /** The live managed part (`null`: no file, or no block). */
  readonly live: string | null;
  /** The node's record at the path, newest first. */
  readonly writes?: readonly FleetWrite[];
  /** sha256 of the whole live file, when it differs from the managed part's (a block file). */
  readonly wholeSha?: string | null;
  readonly expected: Classification;
}

const cases: Case[] = [
  // current
  {
    name: 'dpkg cfo_identical / ucf "md5sums match": equal to the new version is current, nothing asked',
    live: v4,
    expected: { state: 'current' },
  },
  {
    name: 'current even when the record holds older writes (nothing to replace)',
    live: v4,
    writes: [write(v3, 2), write(v2, 1)],
    expected: { state: 'current' },
  },
  // missing
  {
    name: 'ucf "Creating config file … with new version": no file and no record is missing (install creates it)',
    live: null,
    expected: { state: 'missing' },
  },
  {
    name: 'blockinfile appends a block that is not there (insertafter EOF): a file without the block, never written, is missing',
    live: null,
    wholeSha: sha('# my own AGENTS.md\n'),
    expected: { state: 'missing' },
  },
  // deleted
  {
    name: 'ucf test_03 "Not replacing deleted config file": fleet wrote it, someone removed it — deleted',
    live: null,
    writes: [write(v4, 2), write(v3, 1)],
    expected: { state: 'deleted', lastWrite: write(v4, 2) },
  },
  {
    name: 'ucf test_07 / dpkg cfof_userrmd with an updated version: still deleted (ucf asks, fleet never asks and refuses)',
    live: null,
    writes: [write(v2, 1)],
    expected: { state: 'deleted', lastWrite: write(v2, 1) },
  },
  {
    name: 'blockinfile re-adds a block whose markers were removed (ansible#45848, #22668); fleet reads its own block removed: deleted',
    live: null,
    wholeSha: sha('# my AGENTS.md, block cut out\n'),
    writes: [write('# my AGENTS.md\n<!-- block -->\n', 1)],
    expected: { state: 'deleted', lastWrite: write('# my AGENTS.md\n<!-- block -->\n', 1) },
  },
  // stale: main-line versions
  {
    name: 'ucf historical md5sums (md5sum.d): equal to any released version is replaced silently — stale, naming the commit',
    live: v1,
    expected: { state: 'stale', equals: commit('c1'), lineEndingsOnly: false },
  },
  {
    name: 'field report, kept: a host offline across a consolidation holds an old canonical whole — stale, not diverged',
    live: v2,
    writes: [write(v2, 1)],
    expected: { state: 'stale', equals: commit('c2'), lineEndingsOnly: false },
  },
  {
    name: 'blockinfile preserve_line_endings: CRLF endings of the desired view are stale, and said (not current, not diverged)',
    live: v4.replace(/\n/g, '\r\n'),
    expected: { state: 'stale', equals: commit('c4'), lineEndingsOnly: true },
  },
  {
    name: 'CRLF endings of an older version are stale and name that version',
    live: v2.replace(/\n/g, '\r\n'),
    expected: { state: 'stale', equals: commit('c2'), lineEndingsOnly: true },
  },
  {
    name: 'blockinfile file_without_trailing_newline: a missing final newline is stale, line endings only',
    live: v4.slice(0, -1),
    expected: { state: 'stale', equals: commit('c4'), lineEndingsOnly: true },
  },
  // stale: fleet's own writes
  {
    name: 'ucf hashfile (test_04 "package changed, local unchanged"): equal to what fleet last wrote — stale, installed by fleet',
    live: branch,
    writes: [write(branch, 3)],
    expected: { state: 'stale', equals: installed(write(branch, 3)), lineEndingsOnly: false },
  },
  {
    name: "deeper than ucf's one hash: an earlier write of fleet (from an amended commit) is still fleet's own — stale",
    live: branch,
    writes: [write(v4, 4), write(branch, 3)],
    expected: { state: 'stale', equals: installed(write(branch, 3)), lineEndingsOnly: false },
  },
  {
    name: 'a main-line version wins over the record: the commit is named',
    live: v3,
    writes: [write(v3, 2)],
    expected: { state: 'stale', equals: commit('c3'), lineEndingsOnly: false },
  },
  {
    name: "a block file is fleet's own while the whole file is as fleet wrote it (the record holds whole-file hashes)",
    live: `${v4}- branch block line\n`,
    wholeSha: sha('# mine\n<!-- b -->\nbranch block\n<!-- e -->\n'),
    writes: [write('# mine\n<!-- b -->\nbranch block\n<!-- e -->\n', 1)],
    expected: {
      state: 'stale',
      equals: installed(write('# mine\n<!-- b -->\nbranch block\n<!-- e -->\n', 1)),
      lineEndingsOnly: false,
    },
  },
  // modified: every line known, the whole not
  {
    name: 'dpkg useredited (any hash mismatch is a local change): a deleted line is a hand change — modified; the field report called it history',
    live: '# Policy v4\n- think first\n- secrets by name only\n- ask before deleting\n',
    expected: {
      state: 'modified',
      comparedWith: commit('c4'),
      deleted: [{ line: 3, text: '- small reviewed steps' }],
      moved: [],
      added: [],
    },
  },
  {
    name: 'reordered lines are modified, the moved line listed',
    live: '# Policy v4\n- small reviewed steps\n- think first\n- secrets by name only\n- ask before deleting\n',
    expected: {
      state: 'modified',
      comparedWith: commit('c4'),
      deleted: [],
      moved: [{ line: 3, text: '- think first' }],
      added: [],
    },
  },
  {
    name: 'a duplicated line is modified, the repeat listed as added',
    live: `${v4}- think first\n`,
    expected: {
      state: 'modified',
      comparedWith: commit('c4'),
      deleted: [],
      moved: [],
      added: [{ line: 6, text: '- think first' }],
    },
  },
  {
    name: 'ucf/dpkg: an emptied file differs from every hash — modified, every line of the desired view deleted',
    live: '',
    expected: {
      state: 'modified',
      comparedWith: commit('c4'),
      deleted: splitLines(v4).map((text, i) => ({ line: i + 1, text })),
      moved: [],
      added: [],
    },
  },
  {
    name: 'a mix of two old versions is modified, described against the closer one',
    live: '# Policy v2\n- be careful\n- commit small steps\n- no secrets\n- review diffs\n',
    expected: {
      state: 'modified',
      comparedWith: commit('c3'),
      deleted: [{ line: 1, text: '# Policy v3' }],
      moved: [],
      added: [{ line: 1, text: '# Policy v2' }],
    },
  },
  {
    name: 'an old version with one line deleted (offline host, then a hand change) is described against that old version',
    live: '# Policy v1\n- be careful\n- no secrets\n',
    writes: [write(v1, 1)],
    expected: {
      state: 'modified',
      comparedWith: commit('c1'),
      deleted: [{ line: 3, text: '- commit often' }],
      moved: [],
      added: [],
    },
  },
  // diverged: some lines unknown
  {
    name: 'dpkg "Modified (by you or by a script) since installation" / ucf asks: a local line — diverged, fleet refuses instead of asking',
    live: `${v1}- my own rule\n`,
    expected: { state: 'diverged', localLines: 1, lines: [{ line: 5, text: '- my own rule' }] },
  },
  {
    name: 'field report, deliberately not: a backup is no known version — a hand edit overwritten with --force and put back is diverged',
    live: handEdit,
    writes: [write(v4, 2)],
    expected: { state: 'diverged', localLines: 1, lines: [{ line: 6, text: '- my own rule' }] },
  },
  {
    name: "fleet's own write is known whole, by its bytes (ucf md5sum): its lines edited by hand are local — diverged",
    live: `${branch}- and mine\n`,
    writes: [write(branch, 3)],
    expected: {
      state: 'diverged',
      localLines: 2,
      lines: [
        { line: 6, text: '- branch-only rule' },
        { line: 7, text: '- and mine' },
      ],
    },
  },
  {
    name: "ucf compares exact md5sums: CRLF endings of fleet's own branch write are not recognised through the record",
    live: branch.replace(/\n/g, '\r\n'),
    writes: [write(branch, 3)],
    expected: {
      state: 'diverged',
      localLines: 1,
      lines: [{ line: 6, text: '- branch-only rule' }],
    },
  },
  {
    name: 'a line with a trailing space is a local line',
    live: v4.replace('- think first', '- think first '),
    expected: { state: 'diverged', localLines: 1, lines: [{ line: 2, text: '- think first ' }] },
  },
  {
    name: 'a lone carriage return inside a line is content, not a line ending',
    live: v4.replace('- think first', '- think\rfirst'),
    expected: { state: 'diverged', localLines: 1, lines: [{ line: 2, text: '- think\rfirst' }] },
  },
];

describe('classify: the states of contract §8.2, case by case', () => {
  for (const c of cases) {
    it(c.name, () => {
      const wholeSha = c.wholeSha !== undefined ? c.wholeSha : c.live === null ? null : sha(c.live);
      const result = classify(
        { managed: c.live, sha256: wholeSha, writes: c.writes ?? [] },
        desired,
        known,
      );
      expect(result).to.deep.equal(c.expected);
    });
  }

  it('counts every local line, each with its line number', () => {
    const live = `local one\n${v3}local two\nlocal one\n`;
    expect(
      classify({ managed: live, sha256: sha(live), writes: [] }, desired, known),
    ).to.deep.equal({
      state: 'diverged',
      localLines: 3,
      lines: [
        { line: 1, text: 'local one' },
        { line: 7, text: 'local two' },
        { line: 8, text: 'local one' },
      ],
    });
  });

  it('a version published twice (a revert) is named by its newest commit', () => {
    const reverted = new PublishedLines([{ source: commit('c5'), content: v1 }, ...history]);
    expect(classify({ managed: v1, sha256: sha(v1), writes: [] }, desired, reverted)).to.deep.equal(
      { state: 'stale', equals: commit('c5'), lineEndingsOnly: false },
    );
  });

  it('splits lines without terminators and without a phantom last line', () => {
    expect(splitLines('')).to.deep.equal([]);
    expect(splitLines('a')).to.deep.equal(['a']);
    expect(splitLines('a\n')).to.deep.equal(['a']);
    expect(splitLines('a\r\nb\r\n')).to.deep.equal(['a', 'b']);
    expect(splitLines('a\n\n')).to.deep.equal(['a', '']);
  });
});

/**
 * A file's mode, classified like its text (contract §10.4, docs/classification.md "Modes"): the
 * node records the mode fleet wrote, so a chmod by hand is told from a repository's change — as
 * chezmoi shows a mode changed since its last write (`chezmoi status`'s second column, its
 * `testdata/scripts/chmod.txtar`), and unlike Ansible `file`/`copy`, which set `mode:` whatever
 * the file has become.
 */
const modeCases: { name: string; facts: ModeFacts; expected: ModeClassification }[] = [
  {
    name: 'chezmoi: a mode equal to the target state is clean',
    facts: { wanted: '0644', live: '0644', written: '0644' },
    expected: { state: 'current' },
  },
  {
    name: 'chezmoi applychmod_unix.txtar: a file fleet wrote 0644 and narrowed by hand to 0600 is a hand change (narrowed)',
    facts: { wanted: '0644', live: '0600', written: '0644' },
    expected: {
      state: 'modified',
      live: '0600',
      wanted: '0644',
      written: '0644',
      change: 'narrowed',
    },
  },
  {
    name: 'a file fleet wrote 0600 and widened by hand to 0644 is a hand change (widened)',
    facts: { wanted: '0600', live: '0644', written: '0600' },
    expected: {
      state: 'modified',
      live: '0644',
      wanted: '0600',
      written: '0600',
      change: 'widened',
    },
  },
  {
    name: 'a mode changed both ways by hand (0640 written, 0604 live) is a hand change',
    facts: { wanted: '0640', live: '0604', written: '0640' },
    expected: {
      state: 'modified',
      live: '0604',
      wanted: '0640',
      written: '0640',
      change: 'changed',
    },
  },
  {
    name: 'Ansible copy mode: a mode the repository changed since fleet wrote the file is stale (safe to set)',
    facts: { wanted: '0600', live: '0644', written: '0644' },
    expected: { state: 'stale', live: '0644', wanted: '0600', written: '0644' },
  },
  {
    name: 'no record of the mode: wider than the repository says is stale (the install only takes permissions away)',
    facts: { wanted: '0600', live: '0644' },
    expected: { state: 'stale', live: '0644', wanted: '0600' },
  },
  {
    name: 'no record of the mode: narrower than the repository says is a hand change (never widened unproven)',
    facts: { wanted: '0644', live: '0600' },
    expected: { state: 'modified', live: '0600', wanted: '0644', change: 'narrowed' },
  },
  {
    name: 'no mode reported (Windows) or none wanted: nothing to compare',
    facts: { wanted: '0600' },
    expected: { state: 'current' },
  },
];

describe('classifyMode: a mode changed by hand is a hand change (chezmoi), a repository change is stale', () => {
  for (const c of modeCases) {
    it(c.name, () => {
      expect(classifyMode(c.facts)).to.deep.equal(c.expected);
    });
  }

  it('chezmoi private_ / Ansible copy without mode: a new file is 0644, or 0600 when it renders a secret', () => {
    expect(defaultFileMode(false, false)).to.equal('0644');
    expect(defaultFileMode(true, false)).to.equal('0600');
    expect(defaultFileMode(true, true)).to.equal('0600');
    expect(defaultFileMode(false, true)).to.equal(null);
  });
});
