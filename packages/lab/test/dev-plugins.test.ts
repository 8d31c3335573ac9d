/**
 * The lab's dev loop, its pure parts (dev-plugins.ts, restart.ts; docs/plugin-authoring.md "The
 * dev loop"): which of the CLI's plugins a lab serves from their folders, the policy section `lab
 * up` writes for them (only for a node its lab supervisor runs), how a lab brought up again takes
 * the plugins linked now, and which hosts `lab restart` restarts. Then the policy `lab up` writes
 * into a temporary home, read back as a controller reads it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  FleetError,
  Registry,
  nodePolicyFile,
  parseNodePolicy,
  type InstallerDescriptor,
  type NodePolicy,
} from '@fleet/core';
import {
  devPluginSection,
  linkedDevPlugins,
  syncLabDevPlugins,
  withDevPlugins,
  type LabDevPlugin,
} from '../src/dev-plugins.js';
import { writeLabNodePolicy } from '../src/policy.js';
import { lastStartProblems, restartTargets } from '../src/restart.js';

/** A registry stand-in: only `domains()` is read, each with the plugin that provides it. */
function registryOf(entries: [plugin: string, domain: string][]): Pick<Registry, 'domains'> {
  return {
    domains: () =>
      entries.map(([plugin, domain]) => ({
        plugin: { name: plugin, version: '0.1.0', type: 'link' },
        descriptor: { domain } as InstallerDescriptor,
      })),
  };
}

const NPMRC: LabDevPlugin = { name: 'fleet-plugin-npmrc', root: '/src/npmrc', domains: ['npmrc'] };
const SOCKET = '/lab/nodes/node-01/supervisor.sock';

describe('lab dev plugins: the linked plugins a lab serves', () => {
  it('takes the linked plugins that provide a domain, sorted, with their domains', () => {
    const plugins = [
      { name: '@fleet/plugin-router', root: '/cli/router', type: 'core' },
      { name: 'fleet-plugin-npmrc', root: '/src/npmrc', type: 'link' },
      { name: 'fleet-plugin-commands-only', root: '/src/cmd', type: 'link' },
      { name: 'fleet-plugin-installed', root: '/data/x', type: 'user' },
      { name: 'fleet-plugin-a', root: '/src/a', type: 'link' },
    ];
    const registry = registryOf([
      ['@fleet/plugin-router', 'router'],
      ['fleet-plugin-npmrc', 'npmrc'],
      ['fleet-plugin-a', 'a-two'],
      ['fleet-plugin-a', 'a-one'],
      ['fleet-plugin-installed', 'installed'],
    ]);
    expect(linkedDevPlugins(plugins, registry)).to.deep.equal([
      { name: 'fleet-plugin-a', root: '/src/a', domains: ['a-one', 'a-two'] },
      NPMRC,
    ]);
  });

  it('writes a lab section only for a node its lab supervisor runs, and only with plugins', () => {
    expect(devPluginSection({ kind: 'lab', socket: SOCKET }, [NPMRC])).to.deep.equal({
      lab: { devPlugins: [{ name: 'fleet-plugin-npmrc', root: '/src/npmrc' }] },
    });
    expect(devPluginSection({ kind: 'lab', socket: SOCKET }, [])).to.deep.equal({});
    expect(
      devPluginSection({ kind: 'systemd-user', unit: 'fleet-lab-x-node-01.service' }, [NPMRC]),
    ).to.deep.equal({});
  });
});

describe('lab dev plugins: a lab brought up again takes the plugins linked now', () => {
  const base: NodePolicy = parseNodePolicy(
    `version: 1\nsupervisor: { kind: lab, socket: ${SOCKET} }\ndomains: { router: {} }\n`,
    'f',
  ).policy;

  it('adds the section and serves the new domains', () => {
    expect(withDevPlugins(base, [NPMRC])).to.deep.equal({
      ...base,
      domains: { router: { unattended: 'deny' }, npmrc: { unattended: 'deny' } },
      lab: { devPlugins: [{ name: 'fleet-plugin-npmrc', root: '/src/npmrc' }] },
    });
  });

  it('changes nothing when the policy says so already', () => {
    const current = withDevPlugins(base, [NPMRC]) as NodePolicy;
    expect(withDevPlugins(current, [NPMRC])).to.equal(null);
    expect(withDevPlugins(base, [])).to.equal(null);
  });

  it('drops the section after an unlink, keeping every served domain', () => {
    const current = withDevPlugins(base, [NPMRC]) as NodePolicy;
    const next = withDevPlugins(current, []);
    expect(next).to.not.have.property('lab');
    expect(Object.keys(next?.domains ?? {})).to.deep.equal(['router', 'npmrc']);
  });

  it('leaves a node that no lab supervisor runs alone', () => {
    const unit = { ...base, supervisor: { kind: 'systemd-user' as const, unit: 'u.service' } };
    expect(withDevPlugins(unit, [NPMRC])).to.equal(null);
  });
});

describe('lab dev plugins: the policy on disk', () => {
  let home: string;
  beforeEach(async () => {
    home = join(await mkdtemp(join(tmpdir(), 'fleet-lab-dev-')), 'home');
  });
  afterEach(() => rm(join(home, '..'), { recursive: true, force: true }));

  it('lab up writes them into a new node policy, and a later lab up updates only them', async () => {
    const supervisor = { kind: 'lab' as const, socket: SOCKET };
    await writeLabNodePolicy(home, supervisor, [], [NPMRC]);
    const file = nodePolicyFile(home);
    const first = parseNodePolicy(await readFile(file, 'utf8'), file).policy;
    expect(first.lab).to.deep.equal({
      devPlugins: [{ name: 'fleet-plugin-npmrc', root: '/src/npmrc' }],
    });
    expect(first.domains['npmrc']).to.deep.equal({ unattended: 'deny' });
    const moved = { ...NPMRC, root: '/elsewhere/npmrc' };
    expect(await syncLabDevPlugins(home, [moved])).to.equal(true);
    const second = parseNodePolicy(await readFile(file, 'utf8'), file).policy;
    expect(second).to.deep.equal({
      ...first,
      lab: { devPlugins: [{ name: 'fleet-plugin-npmrc', root: '/elsewhere/npmrc' }] },
    });
    expect(await syncLabDevPlugins(home, [moved])).to.equal(false);
  });
});

describe('lab restart: which hosts', () => {
  const known = ['node-01', 'node-02', 'node-03'];
  it('restarts every host when none is named, else the named ones in lab order', () => {
    expect(restartTargets(known, [])).to.deep.equal(known);
    expect(restartTargets(known, ['node-03', 'node-01'])).to.deep.equal(['node-01', 'node-03']);
  });
  it('refuses a host the lab does not have (USAGE, exit 2)', () => {
    expect(() => restartTargets(known, ['node-09']))
      .to.throw(FleetError, 'no lab host node-09 (the lab has node-01, node-02, node-03)')
      .with.property('exitCode', 2);
  });
});

describe('lab restart: why a controller did not come back', () => {
  it("quotes the refusals and error messages of the last start only, without the log's prefixes", () => {
    const log = [
      '[2026-12-05T10:00:00.000Z] supervisor: starting controller (the dev checkout): node …',
      '[2026-12-05T10:00:01.000Z] supervisor: controller: warning: plugin old@0.1.0 is refused: gone',
      '[2026-12-05T10:05:00.000Z] supervisor: restart requested',
      '[2026-12-05T10:05:00.100Z] supervisor: starting controller (the dev checkout): node …',
      'warning: plugin fleet-plugin-npmrc@0.2.0 failed to register: half-written build',
      '[2026-12-05T10:05:01.000Z] supervisor: controller:     "code": "NODE_POLICY_INVALID",',
      '[2026-12-05T10:05:01.000Z] supervisor: controller:         "message": "no loaded plugin provides domain npmrc"',
      '[2026-12-05T10:05:01.100Z] supervisor: failed: the controller exited (code 2)',
    ].join('\n');
    expect(lastStartProblems(log)).to.deep.equal([
      'warning: plugin fleet-plugin-npmrc@0.2.0 failed to register: half-written build',
      '"message": "no loaded plugin provides domain npmrc"',
    ]);
    expect(lastStartProblems('')).to.deep.equal([]);
  });
});
