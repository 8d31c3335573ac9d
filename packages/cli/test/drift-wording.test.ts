/**
 * The human `fleet drift` wording: the summary (issue 17: `--domain X` on no host said "3
 * current") and each item line's reason (issue 35: "missing file" for a file without its block,
 * a stale runtime item without why).
 */
import { expect } from 'chai';
import { buildDriftReport, escapeControl, type DriftHost } from '@fleet/core';
import { renderHost, renderSummary } from '../src/commands/drift.js';

describe('fleet drift: the human summary', () => {
  const report = buildDriftReport({
    generatedAt: new Date(0),
    repoCommit: 'a'.repeat(40),
    canonicalVersion: '1.0.0',
    hosts: ['node-01', 'node-02', 'node-03'].map((host) => ({
      host,
      status: 'current' as const,
      items: [],
    })),
  });

  it('says no host runs a --domain that no host runs, instead of "3 current"', () => {
    expect(renderSummary(report, escapeControl, ['gitconfig'])).to.equal(
      'no host runs gitconfig: nothing to compare (3 hosts in fleet.yaml, commit aaaaaaaaaaaa)',
    );
  });

  it('without --domain, counts the hosts as before', () => {
    expect(renderSummary(report, escapeControl)).to.contain('3 hosts: 3 current');
  });
});

describe('fleet drift: an item line says why where its state does not (issue 35)', () => {
  type Item = DriftHost['items'][number];
  const rows: [name: string, item: Item, line: string][] = [
    [
      'blockinfile: a file that exists without its block is "missing block", not "missing file"',
      {
        layer: 'file',
        domain: 'harness-policy',
        path: '~/.claude/CLAUDE.md',
        state: 'missing',
        block: true,
        detail: 'the file has no managed block (fleet never installed one here)',
      },
      '    missing     block    ~/.claude/CLAUDE.md  the file has no managed block (fleet never installed one here)',
    ],
    [
      'a file that does not exist says so',
      {
        layer: 'file',
        domain: 'files',
        path: '~/.gitconfig',
        state: 'missing',
        detail: 'the file does not exist (fleet never installed it here)',
      },
      '    missing     file     ~/.gitconfig  the file does not exist (fleet never installed it here)',
    ],
    [
      'a stale runtime item carries its reason',
      {
        layer: 'runtime',
        domain: 'bootstrap-systemd',
        path: '~/.config/systemd/user/fleet-controller.service',
        state: 'stale',
        detail: 'the unit is disabled; the manager needs a daemon-reload',
      },
      '    stale       runtime  ~/.config/systemd/user/fleet-controller.service  the unit is disabled; the manager needs a daemon-reload',
    ],
    [
      'a missing derived item too',
      { layer: 'derived', domain: 'router', state: 'missing', detail: 'no volume yet' },
      '    missing     derived  router  no volume yet',
    ],
    [
      'an error keeps its reason',
      {
        layer: 'file',
        domain: 'router',
        path: '~/.config/router/router.yaml',
        state: 'error',
        detail: 'DOMAIN_NOT_SERVED: not served',
      },
      '    error       file     ~/.config/router/router.yaml  DOMAIN_NOT_SERVED: not served',
    ],
    [
      'a stale file names no reason on the line (the plan and report do)',
      {
        layer: 'file',
        domain: 'files',
        path: '~/.bashrc',
        state: 'stale',
        detail: 'equal to the version of commit 0123',
      },
      '    stale       file     ~/.bashrc',
    ],
    [
      'a diverged file: its local lines, not the long detail',
      {
        layer: 'file',
        domain: 'files',
        path: '~/.vimrc',
        state: 'diverged',
        localLines: 1,
        detail: '1 local line found in no known version (lines 3): …',
      },
      '    diverged    file     ~/.vimrc  (1 local line)',
    ],
    [
      'a hostile reason is escaped',
      { layer: 'runtime', domain: 'x', state: 'stale', detail: 'bad\u001b[2Jthing' },
      `    stale       runtime  x  ${escapeControl('bad\u001b[2Jthing')}`,
    ],
  ];
  for (const [name, item, line] of rows) {
    it(name, () => {
      const host: DriftHost = { host: 'node-01', status: 'drifted', items: [item] };
      expect(renderHost(host, escapeControl).split('\n')).to.deep.equal([
        'node-01      drifted',
        line,
      ]);
    });
  }
});
