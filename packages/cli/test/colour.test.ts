/**
 * Colour in the CLI's human output (issue 17): the same lines with and without colour, and the
 * decision as a user meets it — `--no-color`, `NO_COLOR`, `FORCE_COLOR`, a pipe, `--json` — run
 * as real processes of the built CLI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { escapeControl, type DomainPlan, type DriftHost } from '@fleet/core';
import { loadPalette, plainPalette } from '@fleet/core/command';
import { renderHost } from '../src/commands/drift.js';
import { renderPlan } from '@fleet/operator/config/render.js';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const ESC = '\u001b';
const green = (text: string) => `${ESC}[32m${text}${ESC}[39m`;
const yellow = (text: string) => `${ESC}[33m${text}${ESC}[39m`;
const red = (text: string) => `${ESC}[31m${text}${ESC}[39m`;

const driftHost: DriftHost = {
  host: 'node-01',
  status: 'drifted',
  items: [
    { layer: 'file', domain: 'gitconfig', path: '~/.gitconfig', state: 'current' },
    { layer: 'file', domain: 'gitconfig', path: '~/.bashrc', state: 'stale' },
    { layer: 'file', domain: 'gitconfig', path: '~/.vimrc', state: 'diverged', localLines: 2 },
  ],
};

const plan: DomainPlan = {
  schema: 'fleet.plan/v1',
  host: 'node-01',
  domain: 'gitconfig',
  repoCommit: 'a'.repeat(40),
  files: [
    {
      fileId: 'gitconfig',
      path: '~/.gitconfig',
      kind: 'whole',
      item: {
        layer: 'file',
        state: 'stale',
        diff: '--- live\n+++ desired\n@@ -1 +1 @@\n-name = old\n+name = new',
      },
      liveSha256: 'b'.repeat(64),
      desired: 'name = new\n',
    },
  ],
  actions: [],
  changes: true,
};

describe('human output with and without colour', () => {
  it('drift: a host and its items, plain', () => {
    expect(renderHost(driftHost, escapeControl, plainPalette).split('\n')).to.deep.equal([
      'node-01      drifted',
      '    stale       file     ~/.bashrc',
      '    diverged    file     ~/.vimrc  (2 local lines)',
    ]);
  });

  it('drift: the same lines coloured, aligned as the plain ones', async () => {
    const palette = await loadPalette(true);
    expect(renderHost(driftHost, escapeControl, palette).split('\n')).to.deep.equal([
      `node-01      ${yellow('drifted')}`,
      `    ${yellow('stale')}       file     ~/.bashrc`,
      `    ${red('diverged')}    file     ~/.vimrc  (2 local lines)`,
    ]);
  });

  it('config plan: the diff plain, then coloured line by line', async () => {
    const plain = renderPlan(plan, escapeControl, plainPalette).split('\n');
    expect(plain.slice(1, 7)).to.deep.equal([
      `  stale       ~/.gitconfig  (live sha256 ${'b'.repeat(12)})`,
      '      --- live',
      '      +++ desired',
      '      @@ -1 +1 @@',
      '      -name = old',
      '      +name = new',
    ]);
    const coloured = renderPlan(plan, escapeControl, await loadPalette(true)).split('\n');
    expect(coloured.slice(1, 7)).to.deep.equal([
      `  ${yellow('stale')}       ~/.gitconfig  (live sha256 ${'b'.repeat(12)})`,
      `      ${ESC}[1m--- live${ESC}[22m`,
      `      ${ESC}[1m+++ desired${ESC}[22m`,
      `      ${ESC}[36m@@ -1 +1 @@${ESC}[39m`,
      `      ${red('-name = old')}`,
      `      ${green('+name = new')}`,
    ]);
  });

  it('a hostile diff cannot smuggle its own escape codes between the colours', async () => {
    const hostile = {
      ...plan,
      files: [{ ...plan.files[0]!, item: { ...plan.files[0]!.item, diff: `+x${ESC}[2J` } }],
    };
    const lines = renderPlan(hostile, escapeControl, await loadPalette(true)).split('\n');
    expect(lines[2]).to.equal(`      ${green('+x\\x1b[2J')}`);
  });
});

describe('fleet --color, --no-color, NO_COLOR, FORCE_COLOR (token list, a real process)', () => {
  let home: string;
  // The child's environment without the caller's colour settings; stdout is a pipe.
  const env = (extra: Record<string, string>) => {
    const { NO_COLOR: _n, FORCE_COLOR: _f, ...rest } = process.env;
    void _n;
    void _f;
    return { ...rest, ...extra };
  };
  const list = (args: string[], extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, [BIN, 'token', 'list', '--home', home, ...args], {
      encoding: 'utf8',
      env: env(extra),
    });

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-cli-colour-'));
    const issued = spawnSync(
      process.execPath,
      [BIN, 'token', 'issue', '--client', 'laptop', '--scope', 'config:read', '--home', home],
      { encoding: 'utf8', env: env({}) },
    );
    expect(issued.status, issued.stderr).to.equal(0);
  });
  after(async () => rm(home, { recursive: true, force: true }));

  it('plain into a pipe by default', () => {
    const out = list([]);
    expect(out.status, out.stderr).to.equal(0);
    expect(out.stdout).to.contain(' active ').and.not.contain(ESC);
  });

  it('FORCE_COLOR colours the state column; the table stays aligned', () => {
    const out = list([], { FORCE_COLOR: '1' });
    expect(out.status, out.stderr).to.equal(0);
    const [header, row] = out.stdout.split('\n');
    expect(row).to.contain(`  ${green('active')}  `);
    expect(row!.replace(green('active'), 'active').indexOf('active')).to.equal(
      header!.indexOf('STATE'),
    );
  });

  it('--color forces it, --no-color and a non-empty NO_COLOR refuse it, --json never has it', () => {
    expect(list(['--color']).stdout).to.contain(green('active'));
    expect(list(['--no-color'], { FORCE_COLOR: '1' }).stdout).to.not.contain(ESC);
    expect(list([], { FORCE_COLOR: '1', NO_COLOR: '1' }).stdout).to.not.contain(ESC);
    const json = list(['--json', '--color'], { FORCE_COLOR: '1' });
    expect(json.stdout).to.not.contain(ESC);
    expect(JSON.parse(json.stdout)).to.have.property('tokens');
  });
});
