import { expect } from 'chai';
import { classify as classifyWith, type KnownSet } from '../src/classify/classify.js';
import { HistoryIndex } from '../src/classify/history-index.js';
import type { CanonicalVersion } from '../src/classify/history.js';

/** Newest first, as readCanonicalHistory returns them. */
const history: CanonicalVersion[] = [
  {
    commit: 'c3',
    date: '2026-03-01T00:00:00Z',
    content: 'node: {{ host.node_id }}\nlisten: 8081\nmode: fast\n',
  },
  {
    commit: 'c2',
    date: '2026-02-01T00:00:00Z',
    content: 'node: {{ host.node_id }}\nlisten: 8080\n',
  },
  { commit: 'c1', date: '2026-01-01T00:00:00Z', content: 'listen: 8080\n' },
];

/** Classifies a live whole file no record knows, against the host's view of the history. */
const classify = (live: string, desired: string, known: KnownSet) =>
  classifyWith(
    { managed: live, sha256: null, writes: [] },
    { source: { kind: 'commit', commit: 'c3' }, content: desired },
    known,
  );

describe('HistoryIndex (published versions viewed per host)', () => {
  const index = new HistoryIndex(history);
  const desiredFor = (id: string) => `node: ${id}\nlisten: 8081\nmode: fast\n`;

  it('classifies an old rendered version as stale for its own host, naming the commit', () => {
    const alpha = index.forHost({ node_id: 'alpha' });
    expect(classify('node: alpha\nlisten: 8080\n', desiredFor('alpha'), alpha)).to.deep.equal({
      state: 'stale',
      equals: { kind: 'commit', commit: 'c2', date: '2026-02-01T00:00:00Z' },
      lineEndingsOnly: false,
    });
  });

  it("classifies another host's rendering as diverged: that line was never published for it", () => {
    const beta = index.forHost({ node_id: 'beta' });
    expect(classify('node: alpha\nlisten: 8080\n', desiredFor('beta'), beta)).to.deep.equal({
      state: 'diverged',
      localLines: 1,
      lines: [{ line: 1, text: 'node: alpha' }],
    });
  });

  it('recognises a version with no placeholders for any host', () => {
    const gamma = index.forHost({ node_id: 'gamma' });
    expect(classify('listen: 8080\n', desiredFor('gamma'), gamma)).to.deep.include({
      state: 'stale',
      equals: { kind: 'commit', commit: 'c1', date: '2026-01-01T00:00:00Z' },
    });
  });

  it('skips lines a host cannot render (a variable it never had) instead of failing', () => {
    const none = index.forHost({});
    expect(none.has('listen: 8081')).to.equal(true);
    expect(none.has('node: ')).to.equal(false);
  });

  it('knows a rendering of an earlier variable set (a node id changed in hosts/)', () => {
    const renamed = index.forHost({ node_id: 'alpha-2' }, [{ node_id: 'alpha' }]);
    expect(classify('node: alpha\nlisten: 8080\n', desiredFor('alpha-2'), renamed)).to.deep.include(
      { state: 'stale', equals: { kind: 'commit', commit: 'c2', date: '2026-02-01T00:00:00Z' } },
    );
  });

  it('describes a modified file against its closest rendered version, the newest of equal ones', () => {
    const alpha = index.forHost({ node_id: 'alpha' });
    // The whole-version index answers with the newest of a templated and a static version that
    // render alike for a host, in either order.
    const both = (first: string, second: string) =>
      new HistoryIndex([
        { commit: 'new', date: 'd2', content: first },
        { commit: 'old', date: 'd1', content: second },
      ]).forHost({ node_id: 'alpha' });
    for (const known of [
      both('x: {{ host.node_id }}\n', 'x: alpha\n'),
      both('x: alpha\n', 'x: {{ host.node_id }}\n'),
    ]) {
      expect(classify('x: alpha\n', 'y\n', known)).to.deep.include({
        equals: { kind: 'commit', commit: 'new', date: 'd2' },
      });
    }
    expect(classify('listen: 8080\nnode: alpha\n', desiredFor('alpha'), alpha)).to.deep.equal({
      state: 'modified',
      comparedWith: { kind: 'commit', commit: 'c2', date: '2026-02-01T00:00:00Z' },
      deleted: [],
      moved: [{ line: 2, text: 'node: alpha' }],
      added: [],
    });
  });

  it('reports line-ending-only differences against the rendered version', () => {
    const alpha = index.forHost({ node_id: 'alpha' });
    expect(classify('node: alpha\r\nlisten: 8080\r\n', desiredFor('alpha'), alpha)).to.deep.include(
      {
        state: 'stale',
        lineEndingsOnly: true,
      },
    );
  });

  it('indexes each distinct version once', () => {
    expect(index.size).to.equal(3);
  });
});
