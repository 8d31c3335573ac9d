import { expect } from 'chai';
import { domainRuntime, type DomainRuntime } from '../src/config/domain-runtime.js';
import { snapshotFilesOf, targetKey, type FileTarget } from '../src/config/file-target.js';
import { buildHistoryIndexes, targetsForHost } from '../src/config/targets.js';
import { createHash } from 'node:crypto';
import { assessFile, type LiveFile } from '../src/config/file-items.js';
import type { FleetWrite } from '../src/classify/classify.js';
import { wholeFileInstaller } from '../src/installers/whole-file.js';
import type { CanonicalSnapshot } from '../src/classify/history.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const fleetWrite = (content: string): FleetWrite => ({
  sha256: sha(content),
  at: '2026-05-01T10:00:00.000Z',
  operationId: '01J0000000000000000000000A',
});

const declaration: DomainDeclaration = {
  domain: 'demo',
  description: 'demo',
  files: [
    {
      id: 'app.conf',
      path: '~/.config/app/app.conf',
      pathVariable: 'app_path',
      canonical: 'app.conf',
      kind: 'whole',
      format: 'text',
    },
  ],
  hostVariables: ['node_id', 'app_path'],
  coupling: { kind: 'none' },
};
const runtime: DomainRuntime = domainRuntime(declaration, wholeFileInstaller('demo'));

const v2 = 'node = {{ host.node_id }}\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n';
const v1 = 'node = {{ host.node_id }}\nport = 8080\n';
const snapshot: CanonicalSnapshot = {
  commit: 'c2',
  atRef: new Map([['domains/demo/app.conf', v2]]),
  history: new Map([
    [
      'domains/demo/app.conf',
      [
        { commit: 'c2', date: '2026-02-01T00:00:00Z', content: v2 },
        { commit: 'c1', date: '2026-01-01T00:00:00Z', content: v1 },
      ],
    ],
  ]),
};

describe('file targets and drift items', () => {
  const variables = { node_id: 'node-01' };
  const [target] = targetsForHost('node-01', variables, [runtime], snapshot);
  const index = buildHistoryIndexes([runtime], snapshot).get(targetKey('demo', 'app.conf'));
  const present = (content: string, writes: FleetWrite[] = []): LiveFile => ({
    kind: 'present',
    content,
    sha256: sha(content),
    writes,
  });
  const assess = (live: LiveFile) => {
    if (!target || !index) throw new Error('fixture');
    return assessFile({
      target,
      live,
      operator: runtime.operator,
      index,
      variables,
      repoCommit: 'c2',
    }).item;
  };

  it('renders the desired view for the host, secrets left as names', () => {
    expect(target?.path).to.equal('~/.config/app/app.conf');
    expect(target?.desired).to.deep.equal({
      ok: true,
      content: 'node = node-01\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n',
    });
  });

  it('honours a per-host path override', () => {
    const [moved] = targetsForHost(
      'node-01',
      { ...variables, app_path: '~/app.conf' },
      [runtime],
      snapshot,
    );
    expect(moved?.path).to.equal('~/app.conf');
  });

  it('is current when the redacted live file equals the desired view', () => {
    expect(
      assess(present('node = node-01\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n')),
    ).to.deep.equal({
      layer: 'file',
      domain: 'demo',
      path: '~/.config/app/app.conf',
      state: 'current',
    });
  });

  it('is stale, "secret APP_TOKEN rotated", when the host holds its earlier value (the node names it, never the value)', () => {
    const live: LiveFile = {
      kind: 'present',
      content: 'node = node-01\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n',
      sha256: sha('the live bytes hold the old value'),
      rotatedSecrets: ['APP_TOKEN'],
    };
    const item = assess(live);
    expect(item.state).to.equal('stale');
    expect(item.rotatedSecrets).to.deep.equal(['APP_TOKEN']);
    expect(item.detail).to.match(/^secret APP_TOKEN rotated: the host holds the earlier value/);
  });

  it('a rotated secret outside the managed part, or none, leaves a current file current', () => {
    const text = 'node = node-01\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n';
    const live: LiveFile = {
      kind: 'present',
      content: text,
      sha256: sha(text),
      rotatedSecrets: ['OTHER_TOKEN'],
    };
    expect(assess(live).state).to.equal('current');
  });

  it('is stale and names the commit when it equals an older published version', () => {
    const item = assess(present('node = node-01\nport = 8080\n'));
    expect(item.state).to.equal('stale');
    expect(item.detail).to.match(
      /equals the known version commit c1 \(2026-01-01T00:00:00Z\); safe to replace/,
    );
    expect(item.version).to.deep.equal({
      kind: 'commit',
      commit: 'c1',
      date: '2026-01-01T00:00:00Z',
    });
    expect(item.diff).to.contain('-port = 8080').and.to.contain('+port = 8081');
  });

  it('is diverged with the local lines, and recommends adopt', () => {
    const item = assess(present('node = node-01\nport = 9999\n'));
    expect(item).to.deep.include({
      state: 'diverged',
      localLines: 1,
      lines: [{ line: 2, text: 'port = 9999' }],
    });
    expect(item.detail).to.contain('fleet config adopt');
  });

  it('is stale, installed by fleet, when the file is what fleet wrote (a branch, an amended commit)', () => {
    const branch = 'node = node-01\nport = 7000\n';
    const item = assess(present(branch, [fleetWrite(branch)]));
    expect(item).to.deep.include({
      state: 'stale',
      version: {
        kind: 'installed',
        at: '2026-05-01T10:00:00.000Z',
        operationId: '01J0000000000000000000000A',
      },
    });
    expect(item.detail).to.contain('the content fleet installed at 2026-05-01T10:00:00.000Z');
  });

  it('is modified, listing the deleted line, when a line of a known version was removed', () => {
    const item = assess(present('node = node-01\ntoken = {{ secret.APP_TOKEN }}\n'));
    expect(item).to.deep.include({
      state: 'modified',
      localLines: 0,
      version: { kind: 'commit', commit: 'c2', date: '2026-02-01T00:00:00Z' },
      deletedLines: [{ line: 2, text: 'port = 8081' }],
      movedLines: [],
      addedLines: [],
    });
    expect(item.detail).to.contain('1 line deleted (2)').and.contain('--force');
  });

  it('is deleted when fleet wrote the file and it is gone, and says how to recreate it', () => {
    const item = assess({ kind: 'absent', writes: [fleetWrite('x\n')] });
    expect(item.state).to.equal('deleted');
    expect(item.detail).to.contain('someone removed it').and.contain('install --force');
    expect(item.diff?.split('\n').slice(0, 2)).to.deep.equal([
      '--- /dev/null',
      '+++ desired/~/.config/app/app.conf',
    ]);
  });

  it('shows what an install would write for a missing file: a diff from /dev/null (issue 17)', () => {
    const { diff } = assess({ kind: 'absent' });
    const lines = (diff ?? '').split('\n');
    expect(lines.slice(0, 2)).to.deep.equal([
      '--- /dev/null',
      '+++ desired/~/.config/app/app.conf',
    ]);
    // The desired view in template space: a secret stays its placeholder.
    expect(lines.filter((line) => line.startsWith('+') && !line.startsWith('+++'))).to.deep.equal([
      '+node = node-01',
      '+port = 8081',
      '+token = {{ secret.APP_TOKEN }}',
    ]);
  });

  it('reports a missing file, an unsupported one and a refused one', () => {
    expect(assess({ kind: 'absent' })).to.deep.include({
      state: 'missing',
      detail: 'the file does not exist (fleet never installed it here)',
    });
    expect(
      assess({ kind: 'refused', code: 'ENCODING_INVALID', message: 'not UTF-8' }).state,
    ).to.equal('unsupported');
    expect(assess({ kind: 'refused', code: 'IO_ERROR', message: 'EIO' }).state).to.equal('error');
  });

  it('reports a template that does not render for the host as an error item, not a crash', () => {
    const [broken] = targetsForHost('node-02', {}, [runtime], snapshot);
    expect(broken?.desired.ok).to.equal(false);
    if (!broken || !index) throw new Error('fixture');
    const { item } = assessFile({
      target: broken,
      live: { kind: 'absent' },
      operator: runtime.operator,
      index,
      variables: {},
      repoCommit: 'c2',
    });
    expect(item.state).to.equal('error');
    expect(item.detail).to.match(/node_id is not set in hosts\/node-02\.yaml/);
  });
});

describe('desired views of hosts that render alike, computed once (contract §14)', () => {
  // An installer's operator half that counts its views: the view is a pure function of what
  // rendering gave, so a host whose variables render the source alike needs none of its own.
  const counted = () => {
    const whole = wholeFileInstaller('demo');
    const calls: string[] = [];
    const operator = {
      view: (...args: Parameters<typeof whole.view>) => {
        calls.push(args[1]);
        return whole.view(...args);
      },
      managed: whole.managed.bind(whole),
      check: (_file: unknown, content: string) =>
        content.includes('forbidden') ? [{ message: 'the domain refuses it' }] : [],
    };
    return { runtime: { declaration, operator }, calls };
  };
  const desired = (run: DomainRuntime, host: string, vars: Record<string, string>, source = v2) =>
    targetsForHost(host, vars, [run], {
      ...snapshot,
      atRef: new Map([['domains/demo/app.conf', source]]),
    })[0]?.desired;

  it('renders once for hosts whose named variables are equal, and for each other value', () => {
    const { runtime: run, calls } = counted();
    const a = desired(run, 'node-01', { node_id: 'n1', app_path: '~/a.conf' });
    const b = desired(run, 'node-02', { node_id: 'n1', app_path: '~/b.conf' });
    const c = desired(run, 'node-03', { node_id: 'n3' });
    expect(a).to.deep.equal({
      ok: true,
      content: 'node = n1\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n',
    });
    expect(b).to.deep.equal(a);
    expect(c).to.deep.equal({
      ok: true,
      content: 'node = n3\nport = 8081\ntoken = {{ secret.APP_TOKEN }}\n',
    });
    expect(calls.length).to.equal(2);
  });

  it('renders a source without placeholders once for every host', () => {
    const { runtime: run, calls } = counted();
    for (const host of ['a', 'b', 'c']) {
      expect(desired(run, host, { node_id: host }, 'static\n')).to.deep.equal({
        ok: true,
        content: 'static\n',
      });
    }
    expect(calls.length).to.equal(1);
  });

  it("computes every failure for its own host: a missing variable, the domain's refusal", () => {
    const { runtime: run } = counted();
    const missing = desired(run, 'node-07', {});
    expect(missing?.ok).to.equal(false);
    expect(JSON.stringify(missing)).to.contain('hosts/node-07.yaml');
    const refused = { node_id: 'forbidden' };
    expect(desired(run, 'node-08', refused)?.ok).to.equal(false);
    expect(desired(run, 'node-09', refused)).to.deep.equal({
      ok: false,
      problem: { file: 'domains/demo/app.conf', message: 'the domain refuses it' },
    });
  });
});

describe("drift of a files entry's mode (contract §10.4)", () => {
  const desired = 'export EDITOR=vim\n';
  const targetWith = (kind: 'whole' | 'block', mode = '0600'): FileTarget => ({
    domain: 'files',
    file: {
      id: '~/.zshrc',
      path: '~/.zshrc',
      canonical: 'zshrc',
      kind,
      format: 'text',
      mode,
      ...(kind === 'block' ? { markers: { begin: '# BEGIN fleet', end: '# END fleet' } } : {}),
    },
    path: '~/.zshrc',
    canonical: 'domains/files/zshrc',
    desired: { ok: true, content: desired },
  });
  const filesRuntime = domainRuntime(
    {
      domain: 'files',
      description: 'files',
      files: [],
      hostVariables: [],
      coupling: { kind: 'none' },
    },
    wholeFileInstaller('files'),
  );
  const zshSnapshot: CanonicalSnapshot = {
    commit: 'c1',
    atRef: new Map([['domains/files/zshrc', desired]]),
    history: new Map([
      ['domains/files/zshrc', [{ commit: 'c1', date: '2026-01-01T00:00:00Z', content: desired }]],
    ]),
  };
  const index = buildHistoryIndexes(
    [
      {
        ...filesRuntime,
        declaration: { ...filesRuntime.declaration, files: [targetWith('whole').file] },
      },
    ],
    zshSnapshot,
  ).get(targetKey('files', '~/.zshrc'));
  /** A live file; `written`: the mode the node recorded writing these bytes with. */
  const live = (content: string, mode?: string, written?: string): LiveFile => ({
    kind: 'present',
    content,
    sha256: sha(content),
    ...(mode === undefined ? {} : { mode }),
    ...(written === undefined ? {} : { writes: [{ ...fleetWrite(content), mode: written }] }),
  });
  const assessWith = (target: FileTarget, observed: LiveFile) => {
    if (!index) throw new Error('fixture');
    return assessFile({
      target,
      live: observed,
      operator: filesRuntime.operator,
      index,
      variables: {},
      repoCommit: 'c1',
    }).item;
  };

  const cases: {
    name: string;
    target: FileTarget;
    live: LiveFile;
    state: string;
    detail?: string;
  }[] = [
    {
      name: 'current content, another mode: stale, naming both modes',
      target: targetWith('whole'),
      live: live(desired, '0644'),
      state: 'stale',
      detail:
        "mode 0644 grants more than the repository's 0600; safe to narrow: the content is current; safe to replace",
    },
    {
      name: 'local lines and another mode: diverged, the mode named too',
      target: targetWith('whole'),
      live: live('export EDITOR=emacs\n', '0644'),
      state: 'diverged',
      detail: "and its mode 0644 grants more than the repository's 0600",
    },
    {
      name: 'chezmoi "has changed since chezmoi last wrote it": current content narrowed by hand (0644 → 0600) is modified',
      target: targetWith('whole', '0644'),
      live: live(desired, '0600', '0644'),
      state: 'modified',
      detail: 'mode 0600, narrowed by hand since fleet wrote it 0644',
    },
    {
      name: 'current content widened by hand (0600 → 0644) is modified too',
      target: targetWith('whole', '0600'),
      live: live(desired, '0644', '0600'),
      state: 'modified',
      detail: 'mode 0644, widened by hand since fleet wrote it 0600',
    },
    {
      name: 'Ansible copy mode: a mode the repository changed since fleet wrote the file is stale',
      target: targetWith('whole', '0600'),
      live: live(desired, '0644', '0644'),
      state: 'stale',
      detail: 'mode 0644 is the one fleet wrote; the repository now says 0600',
    },
    {
      name: 'a known older version whose mode was changed by hand is modified, not stale',
      target: targetWith('whole', '0644'),
      live: live('export EDITOR=nano\n', '0600', '0644'),
      state: 'modified',
    },
  ];
  for (const { name, target, live: observed, state, detail } of cases) {
    it(name, () => {
      const item = assessWith(target, observed);
      expect(item.state).to.equal(state);
      if (detail !== undefined) expect(item.detail).to.contain(detail);
    });
  }

  it('current content is stale only for another mode: not for the same one, nor for none (Windows)', () => {
    const states = ['0600', undefined, '0640'].map(
      (mode) => assessWith(targetWith('whole'), live(desired, mode)).state,
    );
    expect(states).to.deep.equal(['current', 'current', 'stale']);
  });

  it('asks the node for the mode of a whole entry with one, never of a block entry', () => {
    expect(snapshotFilesOf([targetWith('whole')])).to.deep.equal([
      { domain: 'files', path: '~/.zshrc', mode: true },
    ]);
    expect(snapshotFilesOf([targetWith('block')])).to.deep.equal([
      { domain: 'files', path: '~/.zshrc' },
    ]);
  });
});
