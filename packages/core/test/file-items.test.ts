import { expect } from 'chai';
import {
  buildHistoryIndexes,
  domainRuntime,
  targetKey,
  targetsForHost,
  type DomainRuntime,
} from '../src/config/targets.js';
import { assessFile, type LiveFile } from '../src/config/file-items.js';
import { wholeFileInstaller } from '../src/installers/whole-file.js';
import type { CanonicalSnapshot } from '../src/classify/history.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';

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
  const present = (
    content: string,
    backups: { path: string; content: string }[] = [],
  ): LiveFile => ({
    kind: 'present',
    content,
    sha256: 'f'.repeat(64),
    backups,
  });
  const assess = (live: LiveFile) => {
    if (!target || !index) throw new Error('fixture');
    return assessFile({ target, live, operator: runtime.operator, index, variables }).item;
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

  it('is stale and names the commit when it equals an older published version', () => {
    const item = assess(present('node = node-01\nport = 8080\n'));
    expect(item.state).to.equal('stale');
    expect(item.detail).to.match(
      /equals the published commit c1 \(2026-01-01T00:00:00Z\); safe to replace/,
    );
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

  it('counts a backup the node holds as published', () => {
    const item = assess(
      present('node = node-01\nport = 9999\n', [{ path: 'b/1', content: 'port = 9999\n' }]),
    );
    expect(item.state).to.equal('stale');
  });

  it('reports a missing file, an unsupported one and a refused one', () => {
    expect(assess({ kind: 'absent' })).to.deep.include({
      state: 'missing',
      detail: 'the file does not exist',
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
    });
    expect(item.state).to.equal('error');
    expect(item.detail).to.match(/node_id is not set in hosts\/node-02\.yaml/);
  });
});
