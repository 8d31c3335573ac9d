/**
 * `fleet version` on a Mac reads fleet's one launchd label scheme: the collector asks `launchctl
 * print` (here the testkit's fake, first on PATH) for the controller's agent and every
 * `dev.fleet.report-<slug>` agent `fleet schedule install` writes, and for any plist of an earlier
 * scheme (`dev.fleet.schedule.*`) still in ~/Library/LaunchAgents — which version reports stale.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from 'chai';
import { FAKE_SUPERVISOR_BIN, SpawnProcessRunner } from '@fleet/testkit';
import { collectLaunchd } from '../src/versions/collect.js';

const uid = process.getuid?.() ?? 0;

const plist = (label: string, script: string) =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key><string>${label}</string>`,
    `  <key>ProgramArguments</key><array><string>${process.execPath}</string><string>-e</string><string>${script}</string></array>`,
    '  <key>RunAtLoad</key><true/>',
    '  <key>StartInterval</key><integer>1800</integer>',
    '</dict>',
    '</plist>',
    '',
  ].join('\n');

describe('versions: launchd agents read under the fake launchctl', function () {
  this.timeout(60_000);
  let home: string;
  let runner: SpawnProcessRunner;
  const path = [FAKE_SUPERVISOR_BIN, process.env['PATH'] ?? '/usr/bin:/bin'].join(delimiter);

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-versions-mac-'));
    runner = new SpawnProcessRunner({ HOME: home, PATH: path }, home);
    await mkdir(join(home, 'Library', 'LaunchAgents'), { recursive: true });
  });
  afterEach(async () => {
    await runner.run({
      command: 'launchctl',
      args: ['bootout', `gui/${uid}/dev.fleet.report-drift`],
    });
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
  });

  it('reads the dev.fleet.report-* agents schedule install writes, and an old-scheme plist', async () => {
    const agents = join(home, 'Library', 'LaunchAgents');
    await writeFile(
      join(agents, 'dev.fleet.report-drift.plist'),
      plist('dev.fleet.report-drift', 'process.exit(1)'),
      { mode: 0o644 },
    );
    await writeFile(
      join(agents, 'dev.fleet.schedule.version.plist'),
      plist('dev.fleet.schedule.version', ''),
      { mode: 0o644 },
    );
    const loaded = await runner.run({
      command: 'launchctl',
      args: ['bootstrap', `gui/${uid}`, join(agents, 'dev.fleet.report-drift.plist')],
    });
    expect(loaded.exitCode, loaded.stderr).to.equal(0);
    let seen = await collectLaunchd(
      { home, platform: 'darwin', path, processes: runner, timeoutMs: 10_000 },
      uid,
    );
    for (
      let i = 0;
      i < 200 && seen.find((a) => a.label === 'dev.fleet.report-drift')?.lastExitStatus === null;
      i += 1
    ) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      seen = await collectLaunchd(
        { home, platform: 'darwin', path, processes: runner, timeoutMs: 10_000 },
        uid,
      );
    }
    const byLabel = new Map(seen.map((agent) => [agent.label, agent]));
    expect([...byLabel.keys()]).to.deep.equal([
      'dev.fleet.controller',
      'dev.fleet.report-drift',
      'dev.fleet.report-version',
      'dev.fleet.report-harness-reconcile',
      'dev.fleet.schedule.version',
    ]);
    expect(byLabel.get('dev.fleet.report-drift')).to.deep.include({
      present: true,
      loaded: true,
      state: 'not running',
      lastExitStatus: 1,
    });
    expect(byLabel.get('dev.fleet.schedule.version')).to.deep.include({
      present: true,
      loaded: false,
    });
    expect(byLabel.get('dev.fleet.controller')).to.deep.include({ present: false, loaded: false });
  });
});
