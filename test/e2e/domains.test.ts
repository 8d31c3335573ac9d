/**
 * The two process-coupled domains end to end on a lab fleet of real processes (contract §10.1, §10.2;
 * catalogue 22, 29), through the real `fleet` binary:
 *
 * - router (node-01): an install writes the config file and the installed volume together, then
 *   runs the reload — fleet.yaml names its action id, node-01's own policy defines its argv (a
 *   real process, no shell; contract §5.1); drift reports the `derived` layer `modified` when the
 *   volume is edited by hand, and install replaces it only with `--force`; a reload that fails restores both files (exit 6). A node whose policy does
 *   not define the id refuses the install before writing (node-02, exit 7); a node that does not
 *   serve the router says so, reason and all, in `fleet drift` (node-03).
 * - transport-identity (node-02): a node-id change committed to the repo reaches the running
 *   controller — file written, flag recorded with the lab supervisor, controller restarted, and the
 *   restarted controller answers with the new id.
 * - transport-identity (node-03): a node-id change whose controller cannot start (a failpoint that
 *   fires only in a controller started with that id, as a process that exits 1 with the new flag
 *   would) is rolled back: the old flag restarted, the identity file restored, exit 6, and the old
 *   id still answers.
 *
 * The lab is this file's own (`fleet lab up`, `destroyLab` in after).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createControllerClient,
  parseNodePolicy,
  receiptSchema,
  type DriftReport,
  type FleetErrorLike,
  type LabDocument,
  type Receipt,
} from '@fleet/core';
import { type LabSupervisorState } from '@fleet/lab';
import { writeNodePolicy } from '@fleet/controller';
import { destroyLab, fleet, json, tempDir, type FleetRun } from '../src/fleet.js';

const CONFIG = '~/.config/router/router.yaml';
const VOLUME = '~/.local/share/router/volume/router.yaml';
const IDENTITY = '~/.config/fleet/transport.yaml';

/**
 * The argv of node-01's reload action (its node policy, never fleet.yaml or a request): records
 * each run, and rejects a config holding `reject-me`.
 */
const RELOAD = [
  process.execPath,
  '-e',
  [
    "const fs = require('fs');",
    "const volume = fs.readFileSync(process.env.HOME + '/.local/share/router/volume/router.yaml', 'utf8');",
    "const bad = volume.includes('reject-me');",
    "fs.appendFileSync(process.env.HOME + '/reloads.log', (bad ? 'rejected' : 'ok') + '\\n');",
    'process.exit(bad ? 3 : 0);',
  ].join(' '),
];

describe('e2e: router and transport-identity on a lab fleet', function () {
  this.timeout(300_000);
  let tmp: { path: string; cleanup: () => Promise<void> };
  let dir: string;
  let lab: LabDocument;
  let credentials: { hosts: Record<string, { token: string }> };

  const env = () => ({
    FLEET_REPO: lab.repo,
    FLEET_CREDENTIALS: lab.credentials,
    XDG_STATE_HOME: join(tmp.path, 'state'),
  });
  const run = (args: readonly string[]): Promise<FleetRun> =>
    fleet(args, { cwd: tmp.path, env: env() });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', lab.repo, ...args], { encoding: 'utf8' });
  const home = (host: string) => join(dir, 'nodes', host, 'home');
  const nodeFile = (host: string, path: string) => join(home(host), ...path.slice(2).split('/'));
  const readNode = (host: string, path: string) => readFile(nodeFile(host, path), 'utf8');
  const client = (host: string) =>
    createControllerClient({
      host,
      url: lab.hosts.find((h) => h.name === host)?.controller ?? '',
      token: credentials.hosts[host]?.token ?? '',
      timeoutMs: 10_000,
    });

  async function commit(
    path: string,
    edit: (text: string) => string,
    message: string,
  ): Promise<void> {
    const file = join(lab.repo, ...path.split('/'));
    await writeFile(file, edit(await readFile(file, 'utf8')));
    git('add', '--', path);
    git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      message,
    );
  }

  async function install(
    host: string,
    domain: string,
    ...extra: string[]
  ): Promise<{ run: FleetRun; receipt?: Receipt }> {
    const done = await run(['config', 'install', host, domain, '--confirm', '--json', ...extra]);
    const body = JSON.parse(done.stdout || '{}') as { receipt?: unknown };
    return { run: done, ...(body.receipt ? { receipt: receiptSchema.parse(body.receipt) } : {}) };
  }

  async function drift(
    host: string,
    domain: string,
  ): Promise<{ exitCode: number; report: DriftReport }> {
    const done = await run(['drift', '--host', host, '--domain', domain, '--json']);
    return { exitCode: done.exitCode, report: json<DriftReport>(done) };
  }

  before(async () => {
    tmp = await tempDir('fleet-e2e-domains-');
    dir = join(tmp.path, 'lab');
    // Every controller of this lab inherits the failpoint; it fires only in one started with
    // --node-id node-03-broken (the restart of the failing node-id change below).
    const up = await fleet(['lab', 'up', '--hosts', '3', '--dir', dir, '--json'], {
      cwd: tmp.path,
      env: { FLEET_FAILPOINT: 'controller.start@node-03-broken:throw' },
    });
    expect(up.exitCode, up.stderr).to.equal(0);
    lab = json<LabDocument>(up);
    credentials = JSON.parse(await readFile(lab.credentials, 'utf8')) as typeof credentials;
    await commit(
      'fleet.yaml',
      (text) =>
        text.replace(
          /^ {2}router: \{ unattended: deny \}$/m,
          '  router: { unattended: deny, reload: router-reload }',
        ),
      'router: reload through the node policy action router-reload',
    );
    expect(git('show', 'HEAD:fleet.yaml')).to.contain('reload: router-reload');
    // On node-01 itself (as its owner would): the action the id names.
    await editPolicy('node-01', (policy) => ({
      ...policy,
      domains: {
        ...policy.domains,
        router: { actions: { 'router-reload': { argv: RELOAD, timeoutSeconds: 20 } } },
      },
    }));
  });

  /** Rewrites a lab node's policy file (0600) as the node's owner would. */
  async function editPolicy(
    host: string,
    edit: (policy: ReturnType<typeof parseNodePolicy>['policy']) => unknown,
  ): Promise<void> {
    const file = nodeFile(host, '~/.config/fleet/node-policy.yaml');
    const { policy } = parseNodePolicy(await readFile(file, 'utf8'), file);
    await writeNodePolicy(home(host), edit(policy) as never, { force: true });
  }
  after(async () => {
    if (dir) await destroyLab(dir);
    await tmp?.cleanup();
  });

  describe('router (node-01)', () => {
    it("writes the installed volume with the config file, then runs the node policy's reload action", async () => {
      const { run: done, receipt } = await install('node-01', 'router');
      expect(done.exitCode, done.stderr).to.equal(0);
      expect(receipt).to.include({ outcome: 'installed', verified: true });
      expect(receipt?.files.map((f) => [f.path, f.fileId, f.state])).to.deep.equal([
        [CONFIG, 'router.yaml', 'written'],
        [VOLUME, 'volume', 'written'],
      ]);
      expect(receipt?.actions.map((a) => [a.kind, a.status])).to.deep.equal([
        ['write-volume', 'ok'],
        ['reload', 'ok'],
      ]);
      const config = await readNode('node-01', CONFIG);
      expect(config).to.contain('node: node-01');
      expect(await readNode('node-01', VOLUME)).to.equal(config);
      expect(await readFile(join(home('node-01'), 'reloads.log'), 'utf8')).to.equal('ok\n');
      // The node's audit record names what ran, exactly, and how it ended.
      const audit = await readFile(nodeFile('node-01', '~/.local/state/fleet/audit.jsonl'), 'utf8');
      const record = JSON.parse(audit.trim().split('\n').at(-1) as string) as {
        operation: string;
        actions?: unknown;
      };
      expect(record.operation).to.equal('install');
      expect(record.actions).to.deep.equal([
        { id: 'router-reload', argv: RELOAD, exitCode: 0, timedOut: false },
      ]);
    });

    it('is refused before anything is written by a node whose policy does not define the reload id (node-02, exit 7)', async () => {
      const { run: done } = await install('node-02', 'router');
      expect(done.exitCode, done.stderr).to.equal(7);
      const { error } = json<{ error: { code: string; message: string } }>(done);
      expect(error.code).to.equal('POLICY_REFUSED');
      expect(error.message).to.contain('router-reload');
      expect(await readNode('node-02', CONFIG).catch(() => 'absent')).to.equal('absent');
    });

    it('drift shows why a node that does not serve the router cannot be read (node-03)', async () => {
      await editPolicy('node-03', (policy) => ({
        ...policy,
        domains: { 'transport-identity': {}, 'harness-policy': {} },
      }));
      try {
        const done = await run(['drift', '--host', 'node-03', '--domain', 'router']);
        expect(done.exitCode).to.equal(1);
        expect(done.stdout).to.match(
          /error +file +~\/\.config\/router\/router\.yaml +DOMAIN_NOT_SERVED: this node does not serve domain router: its node policy .* does not list it; to serve it, add "router: \{\}"/,
        );
      } finally {
        await editPolicy('node-03', (policy) => ({
          ...policy,
          domains: { ...policy.domains, router: {} },
        }));
      }
    });

    it('drift reports the derived layer current, then modified when the volume is edited by hand', async () => {
      const clean = await drift('node-01', 'router');
      expect(clean.exitCode).to.equal(0);
      const host = clean.report.hosts[0];
      expect(host?.items.map((i) => [i.layer, i.path, i.state])).to.deep.equal([
        ['file', CONFIG, 'current'],
        ['derived', VOLUME, 'current'],
      ]);

      await writeFile(nodeFile('node-01', VOLUME), 'listen: 0.0.0.0:1\n'); // at the node's keyboard
      const edited = await drift('node-01', 'router');
      expect(edited.exitCode).to.equal(1);
      const items = edited.report.hosts[0]?.items ?? [];
      expect(items.find((i) => i.layer === 'file')?.state).to.equal('current');
      const derived = items.find((i) => i.layer === 'derived');
      // Bytes fleet never wrote there: a hand change (issue 38), not a stale copy.
      expect(derived).to.include({ domain: 'router', path: VOLUME, state: 'modified' });
      expect(derived?.detail).to.contain('a hand change, never replaced without --force');

      // An install refuses to overwrite it (the file itself is unchanged)…
      const { run: refused } = await install('node-01', 'router');
      expect(refused.exitCode, refused.stderr).to.equal(7);
      expect(json<{ error: { code: string } }>(refused).error.code).to.equal('MODIFIED');
      expect(await readNode('node-01', VOLUME)).to.equal('listen: 0.0.0.0:1\n');
      // …and writes the volume again with --force.
      const { run: again, receipt } = await install('node-01', 'router', '--force');
      expect(again.exitCode, again.stderr).to.equal(0);
      expect(receipt?.files.map((f) => f.state)).to.deep.equal(['unchanged', 'written']);
      expect((await drift('node-01', 'router')).exitCode).to.equal(0);
    });

    it('a reload that fails restores the config file and the volume, and exits 6', async () => {
      const before = await readNode('node-01', CONFIG);
      await commit(
        'domains/router/router.yaml',
        (text) => `${text}# reject-me\n`,
        'router: a config the router rejects',
      );
      const { run: done, receipt } = await install('node-01', 'router');
      expect(done.exitCode, done.stderr).to.equal(6);
      expect(receipt).to.include({ outcome: 'rolled-back', verified: false });
      expect(receipt?.error?.code).to.equal('ACTION_FAILED');
      expect(receipt?.files.map((f) => f.state)).to.deep.equal(['restored', 'restored']);
      expect(await readNode('node-01', CONFIG)).to.equal(before);
      expect(await readNode('node-01', VOLUME)).to.equal(before);
      // Rejected, then the restored config reloaded.
      expect(await readFile(join(home('node-01'), 'reloads.log'), 'utf8')).to.equal(
        'ok\nok\nrejected\nok\n',
      );
      await commit(
        'domains/router/router.yaml',
        (text) => text.replace('# reject-me\n', ''),
        'router: revert',
      );
    });

    it('refuses a canonical that is not YAML before anything is sent (line number, no content)', async () => {
      const before = await readNode('node-01', CONFIG);
      await commit(
        'domains/router/router.yaml',
        (text) => `${text}listen: twice-the-key\n`,
        'router: a duplicate key',
      );
      const { run: done } = await install('node-01', 'router');
      // The domain's check refuses the rendering: RENDER_FAILED, exit 2 (contract §7).
      expect(done.exitCode).to.equal(2);
      const { error } = json<{ error: { code: string; message: string } }>(done);
      expect(error.code).to.equal('RENDER_FAILED');
      expect(error.message).to.match(
        /domains\/router\/router\.yaml:\d+ not valid YAML: a key appears twice/,
      );
      expect(error.message).not.to.contain('twice-the-key');
      expect(await readNode('node-01', CONFIG)).to.equal(before);
      await commit(
        'domains/router/router.yaml',
        (text) => text.replace('listen: twice-the-key\n', ''),
        'router: revert',
      );
    });
  });

  describe('the node refuses what its policy cannot allow', () => {
    it('an unattended install of router or transport-identity, whatever the request says (exit 7, nothing written)', async () => {
      for (const [host, domain, fileId, path] of [
        ['node-01', 'router', 'router.yaml', CONFIG],
        ['node-02', 'transport-identity', 'transport.yaml', IDENTITY],
      ] as const) {
        const before = await readNode(host, path).catch(() => null);
        const refused = await client(host)
          .install({
            domain,
            files: [
              {
                fileId,
                path,
                expectedSha256:
                  before === null ? null : createHash('sha256').update(before).digest('hex'),
                content: 'expected_node: unattended\n',
              },
            ],
            parameters: {},
            unattended: true,
          })
          .then(
            () => undefined,
            (error: unknown) => error as FleetErrorLike,
          );
        expect(refused?.code, domain).to.equal('POLICY_REFUSED');
        expect(refused?.exitCode).to.equal(7);
        expect(refused?.message).to.contain('process actions');
        expect(await readNode(host, path).catch(() => null)).to.equal(before);
      }
    });
  });

  describe('transport-identity', () => {
    it('a node-id change reaches the running controller (node-02)', async () => {
      const before = await client('node-02').identity();
      expect(before.nodeId).to.equal('node-02');
      await commit(
        'hosts/node-02.yaml',
        (text) => text.replace('"node-02"', '"node-02-renamed"'),
        'node-02: new node id',
      );

      const { run: done, receipt } = await install('node-02', 'transport-identity');
      expect(done.exitCode, done.stdout + done.stderr).to.equal(0);
      expect(receipt).to.include({ outcome: 'installed', verified: true, host: 'node-02-renamed' });
      expect(receipt?.actions.map((a) => [a.kind, a.status])).to.deep.equal([
        ['update-supervisor-flag', 'ok'],
        ['restart-controller', 'ok'],
        ['verify-node-id', 'ok'],
      ]);
      expect(done.stderr).to.contain('pending');

      const after = await client('node-02').identity();
      expect(after).to.include({ nodeId: 'node-02-renamed', nodeIdFlag: 'node-02-renamed' });
      expect(after.pid).not.to.equal(before.pid);
      expect(await readNode('node-02', IDENTITY)).to.match(/^expected_node: node-02-renamed$/m);
      const supervisor = JSON.parse(
        await readFile(join(dir, 'nodes', 'node-02', 'supervisor.json'), 'utf8'),
      ) as LabSupervisorState;
      expect(supervisor.flags.nodeId).to.equal('node-02-renamed');

      // The runtime layer agrees: file, running flag and repo name one node.
      const { exitCode, report } = await drift('node-02', 'transport-identity');
      expect(exitCode).to.equal(0);
      expect(report.hosts[0]?.items.map((i) => [i.layer, i.state])).to.deep.equal([
        ['file', 'current'],
        ['runtime', 'current'],
      ]);
    });

    it('a node-id change whose controller cannot start is rolled back: exit 6, the old id still answers (node-03)', async () => {
      // The identity file as it is today (same id: nothing to restart).
      const first = await install('node-03', 'transport-identity');
      expect(first.run.exitCode, first.run.stderr).to.equal(0);
      expect(first.receipt?.actions.map((a) => a.status)).to.deep.equal([
        'skipped',
        'skipped',
        'ok',
      ]);
      const before = await client('node-03').identity();
      const file = await readNode('node-03', IDENTITY);

      await commit(
        'hosts/node-03.yaml',
        (text) => text.replace('"node-03"', '"node-03-broken"'),
        'node-03: new node id',
      );
      // The old id was published for this host (rendered with its variables of the time): the
      // live file is stale, not diverged, so no --force is needed.
      const { run: done, receipt } = await install('node-03', 'transport-identity');
      expect(done.exitCode, done.stdout + done.stderr).to.equal(6);
      expect(receipt).to.include({ outcome: 'rolled-back', verified: false, host: 'node-03' });
      expect(receipt?.error?.code).to.equal('VERIFICATION_FAILED');
      expect(receipt?.files.map((f) => f.state)).to.deep.equal(['restored']);

      const after = await client('node-03').identity();
      expect(after).to.include({ nodeId: 'node-03', nodeIdFlag: 'node-03' });
      expect(after.pid).not.to.equal(before.pid); // restarted with the old flag
      expect(await readNode('node-03', IDENTITY)).to.equal(file);
      const supervisor = JSON.parse(
        await readFile(join(dir, 'nodes', 'node-03', 'supervisor.json'), 'utf8'),
      ) as LabSupervisorState;
      expect(supervisor).to.deep.include({ state: 'running' });
      expect(supervisor.flags.nodeId).to.equal('node-03');

      // The repo still names node-03-broken: the runtime layer says so.
      const { report } = await drift('node-03', 'transport-identity');
      expect(report.hosts[0]?.items.find((i) => i.layer === 'runtime')).to.include({
        state: 'stale',
      });
    });
  });
});
