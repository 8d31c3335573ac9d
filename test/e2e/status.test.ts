/**
 * `fleet status` (contract §7) on a lab, through the real CLI: one screen of every host — reachable
 * or not (a controller that accepts and never answers: the per-host timeout, and progress on stderr
 * naming the host waited for), the runtime against canonicalVersion, the host's state in the
 * repository's newest drift report with its age, `offline_pending` from a real harness reconcile,
 * and a runtime transaction in progress — with the exit code the most urgent across hosts wins
 * (4 over 5 over 1).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { FAKE_ARTIFACT_COMMIT, fakeRuntimeArtifact } from '@fleet/testkit';
import { json } from '../src/fleet.js';
import { Lab, sha256 } from './lab-fixture.js';

interface StatusJson {
  schema: string;
  canonicalVersion: string;
  drift: { report: string | null };
  summary: Record<string, number>;
  hosts: {
    host: string;
    state: string;
    reachable: boolean;
    error: { code: string } | null;
    runtime: { version: string; state: string } | null;
    drift: { state: string | null; ageSeconds: number | null };
    offlinePending: { since: string } | null;
    transaction: { attention: string; lastStep: string } | null;
    attention: string[];
  }[];
}

describe('fleet status: one screen for the fleet', function () {
  this.timeout(300_000);
  let lab: Lab;
  let silent: Server;
  const sockets = new Set<Socket>();

  before(async () => {
    lab = await Lab.create('fleet-status-e2e-');
    await lab.up(3);
    // accepts connections and never answers: an unreachable controller the timeout must catch
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await lab?.destroy();
  });

  const status = async (...args: string[]) => {
    const run = await lab.run(['status', '--json', ...args]);
    return { run, report: json<StatusJson>(run) };
  };
  const host = (report: StatusJson, name: string) =>
    report.hosts.find((h) => h.host === name) as StatusJson['hosts'][number];

  it('a fresh lab: every host reachable, its runtime judged against canonicalVersion, no drift report yet', async () => {
    const { run, report } = await status();
    expect(report.schema).to.equal('fleet.status/v1');
    expect(report.drift.report).to.equal(null);
    for (const h of report.hosts) {
      expect(h.reachable, h.host).to.equal(true);
      expect(h.runtime?.version, h.host).to.be.a('string');
      expect(h.drift.state).to.equal(null);
    }
    const states = new Set(report.hosts.map((h) => h.state));
    expect(run.exitCode, run.stderr).to.equal(states.has('attention') ? 1 : 0);
  });

  it('shows each host’s state in the newest drift report, and its age', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const dir = join(lab.repo, 'reports', 'drift', day);
    await lab.writeNode('node-02', '~/.claude/CLAUDE.md', '# a local edit nobody published\n');
    const drift = await lab.run(['drift', '--report-dir', dir]);
    expect(drift.exitCode, drift.stderr).to.equal(1);
    // a second report of the day is drift-2.json: status takes the newest
    const again = await lab.run(['drift', '--report-dir', dir]);
    expect(again.exitCode, again.stderr).to.equal(1);
    const written = JSON.parse(await readFile(join(dir, 'drift-2.json'), 'utf8')) as {
      hosts: { host: string; status: string }[];
    };
    const { run, report } = await status();
    expect(report.drift.report).to.equal(`reports/drift/${day}/drift-2.json`);
    for (const entry of written.hosts) {
      const h = host(report, entry.host);
      expect(h.drift.state, entry.host).to.equal(entry.status);
      expect(h.drift.ageSeconds).to.be.a('number').and.to.be.at.most(600);
    }
    expect(host(report, 'node-02').drift.state).to.equal('drifted');
    expect(host(report, 'node-02').state).to.equal('attention');
    expect(run.exitCode, run.stderr).to.equal(1);
    const human = await lab.run(['status']);
    expect(human.stdout).to.match(/node-02\s+attention/);
    expect(human.stdout).to.match(/node-02: drifted in the last drift report/);
  });

  it('a runtime transaction in progress, an unreachable host with offline_pending: exit 5, progress naming it', async () => {
    // node-02: a staged upgrade its operator has not activated yet
    const bytes = fakeRuntimeArtifact({ version: '0.0.9', salt: 'status' });
    await lab.client('node-02').runtimeStage({
      kind: 'upgrade',
      supervisor: 'lab',
      planId: null,
      target: {
        nodeId: 'node-02',
        package: '@fleet/cli',
        version: '0.0.9',
        build: { sha256: sha256(bytes), commit: FAKE_ARTIFACT_COMMIT },
        protocol: { min: 1, max: 1 },
        catalog: { domains: [], probers: [], bootstrapAdapters: ['lab'] },
      },
      artifact: {
        sha256: sha256(bytes),
        bytes: bytes.length,
        content: bytes.toString('base64'),
        // Signed by the lab's key, which its nodes trust (ADR 0019): staged as a release is.
        signature: lab.signature(bytes),
      },
    });
    // node-03: its controller now accepts and never answers; a real reconcile marks it pending
    const { port } = silent.address() as { port: number };
    await lab.commitEdit(
      'fleet.yaml',
      (text) => text.replace(lab.host('node-03').controller, `http://127.0.0.1:${port}`),
      'node-03 moved',
    );
    const reconcile = await lab.run(['harness', 'reconcile', '--timeout', '2000', '--json']);
    expect(reconcile.stdout).to.contain('offline_pending');

    const { run, report } = await status('--timeout', '3000');
    expect(run.exitCode, run.stderr).to.equal(5);
    expect(run.stderr).to.match(/status: waiting for node-03 \(2\/3 answered\)/);
    const three = host(report, 'node-03');
    expect(three).to.include({ state: 'unreachable', reachable: false });
    expect(three.error?.code).to.be.oneOf(['HOST_UNREACHABLE', 'REQUEST_TIMEOUT']);
    expect(three.offlinePending?.since).to.be.a('string');
    expect(three.attention.join('\n')).to.match(/offline_pending since/);
    const two = host(report, 'node-02');
    expect(two.transaction).to.include({ attention: 'in-progress', lastStep: 'staged' });
    expect(two.attention.join('\n')).to.match(
      /runtime transaction .*\(upgrade\) in progress at "staged"/,
    );
  });

  it('credentials refused by one host win over an unreachable one: exit 4', async () => {
    const file = lab.document.credentials;
    const credentials = JSON.parse(await readFile(file, 'utf8')) as {
      hosts: Record<string, { token: string }>;
    };
    const real = credentials.hosts['node-01']?.token as string;
    (credentials.hosts['node-01'] as { token: string }).token =
      `${real.slice(0, 21)}${'A'.repeat(43)}`;
    await writeFile(file, JSON.stringify(credentials), { mode: 0o600 });
    const { run, report } = await status('--timeout', '3000');
    expect(run.exitCode, run.stderr).to.equal(4);
    expect(host(report, 'node-01')).to.include({ state: 'denied' });
    expect(host(report, 'node-01').error?.code).to.equal('AUTH_INVALID');
    expect(report.summary).to.include({ denied: 1, unreachable: 1 });
  });
});
