/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * The node decides (contract §5.1, docs/node-policy.md), through a real controller: a write
 * credential is never a shell. The issue's probes, sent as they were: an argv in the request, an
 * exfiltrating reload, an unattended install of a process-coupled domain, a domain the node does
 * not serve, an action id or a per-host path the policy does not define; the environment and the
 * audit record of the actions a policy does define; the policy file at start and while running;
 * the one-time migration of the old bootstrap policy; the wire protocol version.
 */
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  FLEET_PROTOCOL_VERSION,
  auditRecordSchema,
  isFleetError,
  type AuditRecord,
  type FleetErrorLike,
  writeSupervisorRecord,
} from '@fleet/core';
import { createController, createNodeContext, recordedControllerSupervisor } from '../src/index.js';
import { APP, SVC } from './support/fixture-registry.js';
import { fixtureRegistry } from './support/fixture-registry.js';
import { install, installBody, sha256 } from './support/install.js';
import { newId, startNode, type PolicyInput, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const exists = (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );

/** Everything the node keeps about operations and audit, as text (what a read token may see). */
async function nodeRecords(node: TestNode): Promise<string> {
  const audit = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
  const dir = join(node.home, STATE, 'operations');
  const names = await readdir(dir).catch(() => [] as string[]);
  const records = await Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')));
  return [audit, ...records].join('\n');
}

async function auditRecords(node: TestNode): Promise<AuditRecord[]> {
  const text = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => auditRecordSchema.parse(JSON.parse(line)));
}

const SERVES_BOTH: PolicyInput = { domains: { fixture: {}, coupled: {} } };

describe('node policy: a write credential is never a shell', () => {
  let node: TestNode;
  let token: string;
  beforeEach(async () => {
    node = await startNode({ policy: SERVES_BOTH });
    token = await node.issue(['config:install', 'config:read']);
  });
  afterEach(async () => node.dispose());

  it('refuses an install whose parameters carry an argv (fleet.reload): nothing written, nothing ran, no env bytes kept', async () => {
    const marker = join(node.home, 'pwned');
    const env = await readFile(join(node.home, '.config/fleet/env'));
    for (const argv of [
      ['/bin/sh', '-c', `id > ${marker}`],
      ['/bin/sh', '-c', 'base64 -w0 .config/fleet/env >&2; exit 1'],
    ]) {
      const operationId = newId();
      const answer = await install(
        node,
        token,
        'coupled',
        [{ path: SVC, fileId: 'svc.yaml', content: 'a: 1\n' }],
        { operationId, parameters: { 'fleet.reload': JSON.stringify(argv) } },
      );
      expect([answer.status, answer.body.error.code], answer.text).to.deep.equal([
        403,
        'POLICY_REFUSED',
      ]);
      expect(answer.body.error.message).to.contain('never carries an argv');
      // Refused before its journal opened, yet claimed: a byte-for-byte replay gets this refusal
      // back and never runs (docs/audit-log.md, A→B→A).
      const status = await node.call(`/v1/operations/${operationId}`, { token });
      expect([status.status, status.body.state, status.body.error?.code]).to.deep.equal([
        200,
        'failed',
        'POLICY_REFUSED',
      ]);
    }
    expect(await exists(node.abs(SVC))).to.equal(false);
    expect(await exists(marker)).to.equal(false);
    const kept = await nodeRecords(node);
    expect(kept).to.not.contain(env.toString('base64'));
    expect(kept).to.not.contain(node.canary);
  });

  it('refuses an action id the node policy does not define, before anything is written', async () => {
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'a: 1\n' }],
      { actions: { restart: 'reload-everything' } },
    );
    expect([answer.status, answer.body.error.code]).to.deep.equal([403, 'POLICY_REFUSED']);
    expect(answer.body.error.message).to.contain('domains.coupled.actions.reload-everything');
    expect(await exists(node.abs(SVC))).to.equal(false);
  });

  it('refuses a domain the node does not serve, saying how to serve it', async () => {
    await node.setPolicy({ domains: { fixture: {} } });
    const unlisted = await install(node, token, 'coupled', [
      { path: SVC, fileId: 'svc.yaml', content: 'a: 1\n' },
    ]);
    expect([unlisted.status, unlisted.body.error.code]).to.deep.equal([403, 'DOMAIN_NOT_SERVED']);
    expect(unlisted.body.error.message).to.contain('add "coupled: {}" under domains:');
    const absent = await install(node, token, 'router', [
      { path: '~/.config/router/router.yaml', fileId: 'router.yaml', content: 'a: 1\n' },
    ]);
    expect(absent.body.error.code).to.equal('DOMAIN_NOT_SERVED');
    expect(absent.body.error.message).to.contain('no plugin on this node provides it');
    // Drift's reads say the same, for the domain's files and its probers.
    const snapshot = await node.call('/v1/snapshot', {
      token,
      body: {
        files: [{ domain: 'coupled', path: SVC }],
        backups: false,
        probes: [{ prober: 'router.volume', domain: 'router', parameters: {} }],
      },
    });
    expect(snapshot.body.files[0]).to.include({ state: 'refused', code: 'DOMAIN_NOT_SERVED' });
    expect(snapshot.body.probes[0]).to.include({ state: 'error', code: 'DOMAIN_NOT_SERVED' });
    const inventory = await node.call('/v1/inventory', { token });
    expect(inventory.body.files.map((f: { domain: string }) => f.domain)).to.not.include('coupled');
    expect(await exists(node.abs(SVC))).to.equal(false);
  });

  it('refuses "unattended": true for a process-coupled domain whatever is asked, and for a domain whose policy does not allow it', async () => {
    const coupled = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'a: 1\n' }],
      { unattended: true },
    );
    expect([coupled.status, coupled.body.error.code]).to.deep.equal([403, 'POLICY_REFUSED']);
    expect(coupled.body.error.message).to.contain('process actions');
    const denied = await install(
      node,
      token,
      'fixture',
      [{ path: APP, fileId: 'app.conf', content: 'x\n' }],
      { unattended: true },
    );
    expect(denied.body.error.code).to.equal('POLICY_REFUSED');
    expect(await exists(node.abs(SVC))).to.equal(false);
    expect(await exists(node.abs(APP))).to.equal(false);

    await node.setPolicy({ domains: { fixture: { unattended: 'allow' }, coupled: {} } });
    const allowed = await install(
      node,
      token,
      'fixture',
      [{ path: APP, fileId: 'app.conf', content: 'x\n' }],
      { unattended: true },
    );
    expect(allowed.status, allowed.text).to.equal(200);
    expect((await auditRecords(node)).at(-1)?.detail).to.match(/^unattended: /);
  });

  it("refuses a file's mode or action the node would not honour, and an unattended install of a file with an action (contract §10.4), before anything is written", async () => {
    const withFile = async (extra: Record<string, unknown>, unattended?: boolean) => {
      const body = await installBody(
        node,
        'fixture',
        [{ path: APP, fileId: 'app.conf', content: 'x\n' }],
        unattended === undefined ? {} : { unattended },
      );
      return node.call('/v1/install', {
        token,
        body: { ...body, files: body.files.map((file) => ({ ...file, ...extra })) },
      });
    };
    // A mode others may write is no mode fleet writes: the wire schema refuses it.
    const shared = await withFile({ mode: '0666' });
    expect([shared.status, shared.body.error.code]).to.deep.equal([400, 'BAD_REQUEST']);
    // A domain that declares its own files has no per-file mode or action: its installer would
    // ignore them, so the node refuses them.
    for (const extra of [{ mode: '0600' }, { action: 'fixture-reload' }]) {
      const declared = await withFile(extra);
      expect([declared.status, declared.body.error.code]).to.deep.equal([400, 'BAD_REQUEST']);
      expect(declared.body.error.message).to.contain('declares its own files');
    }
    await node.setPolicy({ domains: { fixture: { unattended: 'allow' }, coupled: {} } });
    const unattended = await withFile({ action: 'fixture-reload' }, true);
    expect([unattended.status, unattended.body.error.code]).to.deep.equal([403, 'POLICY_REFUSED']);
    expect(unattended.body.error.message).to.contain('a scheduled run never starts a process');
    expect(await exists(node.abs(APP))).to.equal(false);
  });

  it('accepts a per-host path only where the node policy lists it', async () => {
    const moved = '~/custom/blue.conf';
    const refused = await install(node, token, 'fixture', [
      { path: moved, fileId: 'app.conf', content: 'x\n' },
    ]);
    expect([refused.status, refused.body.error.code]).to.deep.equal([403, 'POLICY_REFUSED']);
    expect(await exists(node.abs(moved))).to.equal(false);

    await node.setPolicy({
      domains: { fixture: { paths: { 'app.conf': ['~/custom/*.conf'] } }, coupled: {} },
    });
    const accepted = await install(node, token, 'fixture', [
      { path: moved, fileId: 'app.conf', content: 'x\n' },
    ]);
    expect(accepted.status, accepted.text).to.equal(200);
    expect(await readFile(node.abs(moved), 'utf8')).to.equal('x\n');
    // As the file it overrides, not another one.
    const other = await install(node, token, 'fixture', [
      { path: '~/custom/green.conf', fileId: 'second.conf', content: 'x\n' },
    ]);
    expect(other.body.error.code).to.equal('BAD_REQUEST');
  });

  it('admits a path again under each version of the policy: one the next version drops is refused', async () => {
    const moved = '~/custom/blue.conf';
    await node.setPolicy({
      domains: { fixture: { paths: { 'app.conf': ['~/custom/*.conf'] } }, coupled: {} },
    });
    const snapshot = () =>
      node.call('/v1/snapshot', {
        token,
        body: { files: [{ domain: 'fixture', path: moved }], backups: false },
      });
    for (let i = 0; i < 2; i += 1) {
      const read = await snapshot();
      expect(read.body.files[0].state, read.text).to.be.oneOf(['present', 'absent']);
    }
    await node.setPolicy({ domains: { fixture: {}, coupled: {} } });
    const refused = await snapshot();
    expect(refused.body.files[0]).to.include({ state: 'refused', code: 'POLICY_REFUSED' });
    const write = await install(node, token, 'fixture', [
      { path: moved, fileId: 'app.conf', content: 'y\n' },
    ]);
    expect([write.status, write.body.error.code]).to.deep.equal([403, 'POLICY_REFUSED']);
  });
});

describe('node policy: the coupled actions it defines', () => {
  let node: TestNode;
  let token: string;
  let dump: string;
  /** The action's program text: what the audit record must name, exactly. */
  let script: string;
  const saved: Record<string, string | undefined> = {};
  const controllerEnv = {
    FLEET_TEST_TOKEN: 'fleet-test-token-7d1e',
    XDG_RUNTIME_DIR: '/run/user/fleet-test',
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/fleet-test/bus',
    AWS_SECRET_ACCESS_KEY: 'aws-secret-in-controller-env',
  };

  before(() => {
    for (const [key, value] of Object.entries(controllerEnv)) {
      saved[key] = process.env[key];
      process.env[key] = value;
    }
  });
  after(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  beforeEach(async () => {
    dump = join(await mkdtemp(join(tmpdir(), 'fleet-action-')), 'env.json');
    // What a child sees: its whole environment and the kernel's record of it.
    script = [
      "const fs = require('fs');",
      `fs.writeFileSync(${JSON.stringify(dump)}, JSON.stringify({ env: process.env,`,
      "  proc: fs.readFileSync('/proc/self/environ', 'utf8') }));",
      "process.stdout.write('printed ' + (process.env.HOME || ''));",
      "process.stderr.write(' and ' + fs.readFileSync(process.env.HOME + '/.config/fleet/env', 'utf8'));",
      'process.exit(Number(process.argv[1] || 0));',
    ].join(' ');
    node = await startNode({
      policy: {
        domains: {
          fixture: {},
          coupled: {
            actions: {
              'dump-env': { argv: [process.execPath, '-e', script, '0'] },
              'dump-fail': { argv: [process.execPath, '-e', script, '3'] },
              'dump-tell': {
                argv: [process.execPath, '-e', script, '0'],
                output: 'return',
                outputBytes: 4096,
              },
            },
          },
        },
      },
    });
    token = await node.issue(['config:install', 'config:read']);
  });
  afterEach(async () => {
    await node.dispose();
    await rm(join(dump, '..'), { recursive: true, force: true });
  });

  it("gives the action a minimal environment: none of the controller's tokens, secrets or FLEET_* variables", async () => {
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'a: {{ secret.CANARY }}\n' }],
      { actions: { restart: 'dump-env' } },
    );
    expect(answer.status, answer.text).to.equal(200);
    const seen = JSON.parse(await readFile(dump, 'utf8')) as {
      env: Record<string, string>;
      proc: string;
    };
    const names = Object.keys(seen.env).filter((n) => n !== 'NODE_V8_COVERAGE');
    for (const name of names) {
      expect(name, name).to.match(
        /^(PATH|HOME|LANG|LC_[A-Z_]+|XDG_RUNTIME_DIR|DBUS_SESSION_BUS_ADDRESS)$/,
      );
    }
    expect(seen.env).to.include({
      HOME: node.home,
      XDG_RUNTIME_DIR: controllerEnv.XDG_RUNTIME_DIR,
      DBUS_SESSION_BUS_ADDRESS: controllerEnv.DBUS_SESSION_BUS_ADDRESS,
    });
    for (const text of [JSON.stringify(seen.env), seen.proc]) {
      expect(text).to.not.contain('FLEET_');
      expect(text).to.not.contain(controllerEnv.FLEET_TEST_TOKEN);
      expect(text).to.not.contain(controllerEnv.AWS_SECRET_ACCESS_KEY);
      expect(text).to.not.contain(node.canary);
      expect(text).to.not.contain(token);
    }
  });

  it('names the argv that ran and its exit status in the audit record; what it printed stays on the node', async () => {
    await node.write(SVC, 'a: 0\n');
    const failed = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'a: 1\n' }],
      { actions: { restart: 'dump-fail' } },
    );
    expect(failed.status, failed.text).to.equal(200); // a rolled-back receipt
    expect(failed.body.outcome).to.equal('rolled-back');
    expect(failed.text).to.not.contain(`printed ${node.home}`).and.not.contain(node.canary);
    expect((await auditRecords(node)).at(-1)?.actions).to.deep.equal([
      {
        id: 'dump-fail',
        argv: [process.execPath, '-e', script, '3'],
        exitCode: 3,
        timedOut: false,
      },
    ]);

    const ok = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'a: 2\n' }],
      { actions: { restart: 'dump-env' } },
    );
    expect(ok.body.outcome).to.equal('installed');
    expect((await auditRecords(node)).at(-1)?.actions).to.deep.equal([
      { id: 'dump-env', argv: [process.execPath, '-e', script, '0'], exitCode: 0, timedOut: false },
    ]);
    // What the action printed (its output, with the env file) is nowhere in the node's records.
    const kept = await nodeRecords(node);
    expect(kept).to.not.contain(`printed ${node.home}`).and.not.contain(node.canary);
  });

  it('returns the output of an action whose policy says output: return, redacted', async () => {
    const answer = await install(
      node,
      token,
      'coupled',
      [{ path: SVC, fileId: 'svc.yaml', content: 'a: 1\n' }],
      { actions: { restart: 'dump-tell' } },
    );
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.text).to.contain(`printed ${node.home}`).and.contain('{{ secret.CANARY }}');
    expect(answer.text).to.not.contain(node.canary);
  });
});

describe('node policy: the file', () => {
  const cleanup: string[] = [];
  after(async () => {
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
  });

  async function homeWith(policy: string | null, mode = 0o600): Promise<string> {
    const home = await mkdtemp(join(tmpdir(), 'fleet-policy-'));
    cleanup.push(home);
    if (policy !== null) {
      await mkdir(join(home, '.config', 'fleet'), { recursive: true, mode: 0o700 });
      await writeFile(join(home, '.config', 'fleet', 'node-policy.yaml'), policy, { mode });
      await chmod(join(home, '.config', 'fleet', 'node-policy.yaml'), mode);
    }
    return home;
  }

  async function startFails(home: string): Promise<FleetErrorLike> {
    try {
      const controller = await createController({
        home,
        nodeId: 'node-01',
        registry: await fixtureRegistry(),
      });
      await controller.close();
    } catch (error) {
      if (isFleetError(error)) return error;
      throw error;
    }
    throw new Error('the controller started');
  }

  it('does not start without one, naming the fix', async () => {
    const home = await homeWith(null);
    const error = await startFails(home);
    expect(error.code).to.equal('NODE_POLICY_MISSING');
    expect(error.suggestions?.join(' ')).to.contain(`fleet node-policy init --home ${home}`);
  });

  it('does not start with one wider than 0600', async () => {
    const error = await startFails(await homeWith('version: 1\n', 0o644));
    expect(error.code).to.equal('NODE_POLICY_INSECURE');
    expect(error.message).to.contain('mode 0644').and.contain('chmod 600');
  });

  it('does not start with an invalid one, naming file, line and field', async () => {
    const home = await homeWith('version: 1\ndomains:\n  fixture:\n    unattend: allow\n');
    const error = await startFails(home);
    expect(error.code).to.equal('NODE_POLICY_INVALID');
    expect(error.problems).to.deep.include({
      file: join(home, '.config/fleet/node-policy.yaml'),
      line: 4,
      path: 'domains.fixture.unattend',
      message: 'unknown field',
    });
    const unknown = await startFails(await homeWith('version: 1\ndomains:\n  nosuch: {}\n'));
    expect(unknown.problems?.[0]).to.include({ line: 3, path: 'domains.nosuch' });
    expect(unknown.problems?.[0]?.message).to.contain('no loaded plugin provides domain nosuch');
  });

  it('does not start when its supervisor is not the one the adapter recorded installing, naming both', async () => {
    const home = await homeWith(
      'version: 1\nsupervisor:\n  kind: systemd-user\n  unit: other.service\n',
    );
    await writeSupervisorRecord(home, {
      supervisor: 'systemd-user',
      name: 'fleet-controller.service',
      definition: '~/.config/systemd/user/fleet-controller.service',
    });
    const error = await startFails(home);
    expect(error.code).to.equal('SUPERVISOR_MISMATCH');
    expect(error.message).to.contain('systemd-user other.service');
    expect(error.message).to.contain('records systemd-user fleet-controller.service');
    // The same unit in both: it starts.
    await writeFile(
      join(home, '.config/fleet/node-policy.yaml'),
      'version: 1\nsupervisor:\n  kind: systemd-user\n  unit: fleet-controller.service\n',
      { mode: 0o600 },
    );
    const controller = await createController({
      home,
      nodeId: 'node-01',
      registry: await fixtureRegistry(),
    });
    await controller.close();
  });

  it("drives no coupled restart whose supervisor disagrees with the policy's, nor one no adapter recorded", async () => {
    const home = await homeWith(null);
    const ctx = createNodeContext({ home, nodeId: 'node-01' });
    const registry = await fixtureRegistry();
    const unit = { kind: 'systemd-user', unit: 'other.service' } as const;
    // The policy names a unit, but no adapter recorded installing the controller: none to drive.
    expect(await recordedControllerSupervisor(registry, ctx, unit)).to.equal(null);
    await writeSupervisorRecord(home, {
      supervisor: 'systemd-user',
      name: 'fleet-controller.service',
      definition: '~/.config/systemd/user/fleet-controller.service',
    });
    let error: unknown;
    try {
      await recordedControllerSupervisor(registry, ctx, unit);
    } catch (caught) {
      error = caught;
    }
    expect(isFleetError(error) && error.code).to.equal('SUPERVISOR_MISMATCH');
  });

  it('is read again when it changes: a broken version closes the node until it is fixed', async () => {
    const node = await startNode({ policy: SERVES_BOTH });
    try {
      const token = await node.issue(['config:install', 'config:read']);
      const file = join(node.home, '.config/fleet/node-policy.yaml');
      await writeFile(`${file}.new`, 'version: 1\ndomains: [fixture]\n', { mode: 0o600 });
      await rename(`${file}.new`, file);
      const health = await node.call('/v1/health', { token });
      const check = health.body.checks.find((c: { name: string }) => c.name === 'node-policy');
      expect(health.body.status).to.equal('degraded');
      expect(check.status).to.equal('failing');
      expect(check.detail).to.contain(':2 domains:');
      const closed = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'x\n' },
      ]);
      expect([closed.status, closed.body.error.code]).to.deep.equal([503, 'NODE_POLICY_INVALID']);
      expect(await exists(node.abs(APP))).to.equal(false);

      await node.setPolicy({ domains: { fixture: {} } });
      const open = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'x\n' },
      ]);
      expect(open.status, open.text).to.equal(200);
      const healthy = await node.call('/v1/health', { token });
      expect(healthy.body.status).to.equal('ok');
    } finally {
      await node.dispose();
    }
  });

  it('migrates the old bootstrap policy once, keeping its decision, and says so in the audit log', async () => {
    const home = await homeWith(null);
    await mkdir(join(home, STATE), { recursive: true, mode: 0o700 });
    const old = join(home, STATE, 'bootstrap-policy.json');
    await writeFile(old, JSON.stringify({ version: 1, bootstrap: 'allow', supervisors: ['lab'] }), {
      mode: 0o600,
    });
    const controller = await createController({
      home,
      nodeId: 'node-01',
      registry: await fixtureRegistry(),
    });
    await controller.close();
    const policy = await readFile(join(home, '.config/fleet/node-policy.yaml'), 'utf8');
    expect(policy).to.match(/domains:\n {2}coupled: \{\}\n {2}declared: \{\}\n {2}fixture: \{\}/);
    expect(policy).to.match(/bootstrap:\n {2}allow: true\n {2}supervisors:\n {4}- lab/);
    expect(policy).to.not.contain('actions');
    expect(await exists(old)).to.equal(false);
    expect(await exists(`${old}.migrated`)).to.equal(true);
    const audit = await readFile(join(home, STATE, 'audit.jsonl'), 'utf8');
    const record = JSON.parse(audit.trim().split('\n').at(-1) as string);
    expect(record).to.include({ operation: 'node-policy', outcome: 'ok' });
    expect(record.detail).to.contain('migrated').and.contain('no actions');
  });
});

describe('node policy: the wire protocol version', () => {
  let node: TestNode;
  let token: string;
  before(async () => {
    node = await startNode();
    token = await node.issue(['config:install', 'config:read']);
  });
  after(async () => node.dispose());

  it('refuses a client of another protocol, naming both versions, and does nothing', async () => {
    for (const protocol of [null, 1, FLEET_PROTOCOL_VERSION + 1]) {
      const answer = await node.call('/v1/install', {
        token,
        protocol,
        body: {
          operationId: newId(),
          domain: 'fixture',
          files: [{ fileId: 'app.conf', path: APP, expectedSha256: null, content: 'x\n' }],
          parameters: {},
        },
      });
      expect([answer.status, answer.body.error.code]).to.deep.equal([400, 'PROTOCOL_MISMATCH']);
      expect(answer.body.error.message).to.contain(`fleet protocol ${FLEET_PROTOCOL_VERSION}`);
      expect(answer.body.error.message).to.contain(
        protocol === null
          ? 'protocol 1 (it sends no fleet-protocol header)'
          : `protocol ${protocol}`,
      );
      expect(answer.headers['fleet-protocol']).to.equal(String(FLEET_PROTOCOL_VERSION));
    }
    expect(await exists(node.abs(APP))).to.equal(false);
  });

  it('answers identity and health to a client of any protocol (it tells the client which it speaks)', async () => {
    const identity = await node.call('/v1/identity', { token, protocol: null });
    expect(identity.status).to.equal(200);
    expect(identity.body.protocol).to.equal(FLEET_PROTOCOL_VERSION);
    expect((await node.call('/v1/health', { token, protocol: null })).status).to.equal(200);
  });
});

describe('node policy: managed files linked into symlinkInto directories', () => {
  let node: TestNode;
  let token: string;
  const TARGET = '~/dotfiles/fixture/app.conf';
  beforeEach(async () => {
    node = await startNode({ policy: SERVES_BOTH });
    token = await node.issue(['config:install', 'config:read']);
    await node.write(TARGET, 'old\n');
    await mkdir(join(node.abs(APP), '..'), { recursive: true, mode: 0o700 });
    // A relative link, as dotfile managers make them.
    await symlink('../../dotfiles/fixture/app.conf', node.abs(APP));
  });
  afterEach(async () => node.dispose());

  const live = async (path: string) => sha256(await readFile(node.abs(path)));

  it('refuses a symlinked managed file when the policy lists no directory for it', async () => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256: await live(TARGET) },
    ]);
    expect(answer.body.error.code).to.equal('SYMLINK_REFUSED');
    expect(await readFile(node.abs(TARGET), 'utf8')).to.equal('old\n');
  });

  it("writes the link's target in place, atomically in its directory, and leaves the link untouched", async () => {
    await node.setPolicy({ ...SERVES_BOTH, symlinkInto: ['~/dotfiles'] });
    const before = await lstat(node.abs(APP));
    const exported = await node.call('/v1/export', { token, body: { path: APP } });
    expect(exported.body).to.include({ exists: true, content: 'old\n', sha256: sha256('old\n') });

    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256: sha256('old\n') },
    ]);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.files[0]).to.include({ path: APP, beforeSha256: sha256('old\n') });
    expect(await readFile(node.abs(TARGET), 'utf8')).to.equal('new\n');
    const after = await lstat(node.abs(APP));
    expect(after.isSymbolicLink()).to.equal(true);
    expect([after.ino, await readlink(node.abs(APP))]).to.deep.equal([
      before.ino,
      '../../dotfiles/fixture/app.conf',
    ]);
    expect(await readFile(node.abs(answer.body.files[0].backupPath), 'utf8')).to.equal('old\n');
    const temps = (await readdir(join(node.abs(TARGET), '..'))).filter((n) =>
      n.startsWith('.fleet-tmp-'),
    );
    expect(temps).to.deep.equal([]);
  });

  it('refuses a link into a directory the policy does not list, into fleet state, or out of the home', async () => {
    await node.setPolicy({ ...SERVES_BOTH, symlinkInto: ['~/other'] });
    const unlisted = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256: sha256('old\n') },
    ]);
    expect(unlisted.body.error.code).to.equal('SYMLINK_REFUSED');
    expect(unlisted.body.error.message).to.contain('symlinkInto');

    await node.setPolicy({ ...SERVES_BOTH, symlinkInto: ['~/dotfiles', '~/.config'] });
    for (const [link, code] of [
      ['../fleet/env', 'PATH_OUTSIDE_ROOT'],
      ['/etc/passwd', 'PATH_OUTSIDE_ROOT'],
    ] as const) {
      await rm(node.abs(APP));
      await symlink(link, node.abs(APP));
      const answer = await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256: null },
      ]);
      expect(answer.body.error.code, link).to.equal(code);
    }
    expect(await readFile(node.abs(TARGET), 'utf8')).to.equal('old\n');
    expect(await readFile(join(node.home, '.config/fleet/env'), 'utf8')).to.contain(node.canary);
  });
});

/**
 * A symlinked parent directory — `~/.config/fixture -> ../dotfiles/fixture`, the layout a dotfiles
 * checkout makes (GNU Stow folds a package's directory into one link; chezmoi users keep
 * `~/.config` in the checkout) — is managed at its target when `symlinkInto` lists it, with the
 * refusals of a symlinked file (issue 38).
 */
describe('node policy: managed files under a parent directory linked into symlinkInto', () => {
  let node: TestNode;
  let token: string;
  const TARGET = '~/dotfiles/fixture/app.conf';
  const LINK = '~/.config/fixture';
  beforeEach(async () => {
    node = await startNode({ policy: SERVES_BOTH });
    token = await node.issue(['config:install', 'config:read']);
    await node.write(TARGET, 'old\n');
    await rm(node.abs(LINK), { recursive: true, force: true });
    await symlink('../dotfiles/fixture', node.abs(LINK));
  });
  afterEach(async () => node.dispose());

  const put = (expectedSha256: string | null) =>
    install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'new\n', expectedSha256 },
    ]);

  it('refuses it when the policy lists no directory, as a symlinked file (SYMLINK_REFUSED)', async () => {
    const answer = await put(sha256('old\n'));
    expect(answer.body.error.code).to.equal('SYMLINK_REFUSED');
    expect(await readFile(node.abs(TARGET), 'utf8')).to.equal('old\n');
  });

  it('Stow-style folded directory: reads and writes the file under the link target, the link untouched', async () => {
    await node.setPolicy({ ...SERVES_BOTH, symlinkInto: ['~/dotfiles'] });
    const before = await lstat(node.abs(LINK));
    const exported = await node.call('/v1/export', { token, body: { path: APP } });
    expect(exported.body).to.include({ exists: true, content: 'old\n' });
    const answer = await put(sha256('old\n'));
    expect(answer.status, answer.text).to.equal(200);
    expect(await readFile(node.abs(TARGET), 'utf8')).to.equal('new\n');
    const after = await lstat(node.abs(LINK));
    expect([after.isSymbolicLink(), after.ino, await readlink(node.abs(LINK))]).to.deep.equal([
      true,
      before.ino,
      '../dotfiles/fixture',
    ]);
    // A new file in the linked directory is created there too.
    await rm(node.abs(TARGET));
    expect((await put(null)).status).to.equal(200);
    expect(await readFile(node.abs(TARGET), 'utf8')).to.equal('new\n');
  });

  it('refuses a linked directory out of the home, into fleet state, unlisted, or in a chain of links', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'fleet-parent-'));
    try {
      await node.setPolicy({ ...SERVES_BOTH, symlinkInto: ['~/dotfiles', '~/.local'] });
      const cases: [link: string, code: string][] = [
        [outside, 'PATH_OUTSIDE_ROOT'],
        ['../.local/state/fleet', 'PATH_OUTSIDE_ROOT'],
        ['../elsewhere', 'SYMLINK_REFUSED'],
      ];
      await mkdir(join(node.home, 'elsewhere'), { recursive: true });
      for (const [link, code] of cases) {
        await rm(node.abs(LINK));
        await symlink(link, node.abs(LINK));
        const answer = await put(null);
        expect(answer.body.error?.code, link).to.equal(code);
      }
      // A chain: the file under the linked directory is itself a link.
      await rm(node.abs(LINK));
      await symlink('../dotfiles/fixture', node.abs(LINK));
      await rm(node.abs(TARGET));
      await symlink('../other.conf', node.abs(TARGET));
      const chained = await put(null);
      expect(chained.body.error?.code).to.equal('SYMLINK_REFUSED');
      expect(chained.body.error?.message).to.contain('chain');
      // A chain: the linked directory reached through another link.
      await symlink('dotfiles', join(node.home, 'dotlink'));
      await rm(node.abs(LINK));
      await symlink('../dotlink/fixture', node.abs(LINK));
      await node.setPolicy({ ...SERVES_BOTH, symlinkInto: ['~/dotlink'] });
      const through = await put(null);
      expect(through.body.error?.code).to.equal('SYMLINK_REFUSED');
      expect(await readdir(outside)).to.deep.equal([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
