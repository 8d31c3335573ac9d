/**
 * The router installer against a fake host (contract §8.4, §10.1) — the way a plugin author tests a
 * domain with a coupled action:
 * - the operator half is loaded through the registry, as the CLI loads it;
 * - the node half runs on `@fleet/testkit`'s fake host: a real temporary home, the controller's
 *   own writer (`host.writer(domain)`: compare-and-swap, backups, atomic replace, restore), a node
 *   policy defining the reload action (`createFakeHost({ policy })`, run through
 *   `host.forDomain('router')` exactly as a controller runs it), and a `RecordedProcessRunner`
 *   that runs nothing and answers the reload's argv from a script.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import {
  derivedPathParameter,
  isFleetError,
  type Installer,
  type ManagedFile,
  type NodeInstallRequest,
} from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import { routerDomain } from '../src/domain.js';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-router', version: '0.1.0', type: 'core' };
const CONFIG = '~/.config/router/router.yaml';
const VOLUME = '~/.local/share/router/volume/router.yaml';
const RELOAD = ['/usr/bin/routerctl', 'reload', '--graceful'];
/** The node's policy: it serves the router and defines its reload (the request names only the id). */
const POLICY = {
  domains: { router: { actions: { 'router-reload': { argv: RELOAD, timeoutSeconds: 5 } } } },
};
/** What fleet.yaml `domains.router.reload: router-reload` makes an install request carry. */
const RELOAD_ACTION = { reload: 'router-reload' };
const file = routerDomain.files[0] as ManagedFile;

const sha256 = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');

async function loadInstaller(): Promise<Installer> {
  return (await registryFromHooks([{ plugin, hook: register }])).installer('router');
}

/** What the operator sends: the config file planned against its live sha256, and the parameters. */
async function request(
  host: FakeHost,
  content: string,
  parameters: Record<string, string> = {},
  actions: Record<string, string> = {},
): Promise<NodeInstallRequest> {
  const live = await host.readFile(CONFIG);
  return {
    operationId: '01JAAAAAAAAAAAAAAAAAAAAAAA',
    domain: 'router',
    files: [
      {
        fileId: 'router.yaml',
        path: CONFIG,
        expectedSha256: live === undefined ? null : sha256(live),
        content,
      },
    ],
    parameters: { node_id: 'node-01', [derivedPathParameter('volume')]: VOLUME, ...parameters },
    actions,
  };
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; actions?: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isFleetError(error)) return error;
    throw error;
  }
  throw new Error('expected the install to fail');
}

const CONFIG_V1 = 'node: node-01\nlisten: 127.0.0.1:8080\n';
const CONFIG_V2 = 'node: node-01\nlisten: 127.0.0.1:9090\n';

describe('router installer: operator half', () => {
  let installer: Installer;
  before(async () => {
    installer = await loadInstaller();
  });

  it('views and manages the config file whole', () => {
    expect(installer.view(file, CONFIG_V1, routerDomain)).to.equal(CONFIG_V1);
    expect(installer.managed(file, CONFIG_V1)).to.equal(CONFIG_V1);
  });

  it('accepts YAML, with secret placeholders standing for values resolved on the node', () => {
    expect(installer.check?.(file, `${CONFIG_V1}token: {{ secret.ROUTER_TOKEN }}\n`)).to.deep.equal(
      [],
    );
  });

  it('refuses YAML that does not parse with its line and never its content', () => {
    const problems =
      installer.check?.(file, 'node: node-01\nlisten: [127.0.0.1\nsecret: hunter2\n') ?? [];
    expect(problems).to.have.length.greaterThan(0);
    expect(problems[0]).to.include({ file: 'domains/router/router.yaml' });
    expect(problems[0]?.line).to.be.a('number');
    expect(JSON.stringify(problems)).not.to.contain('hunter2');

    const duplicate = installer.check?.(file, 'listen: a\nroutes: []\nlisten: b\n') ?? [];
    expect(duplicate[0]).to.deep.include({ line: 3 });
    expect(duplicate[0]?.message).to.contain('DUPLICATE_KEY');
  });
});

describe('router installer: node half', () => {
  let host: FakeHost;
  let installer: Installer;
  beforeEach(async () => {
    host = await createFakeHost({
      nodeId: 'node-01',
      secrets: { ROUTER_TOKEN: 'canary-7f3a' },
      policy: POLICY,
    });
    installer = await loadInstaller();
  });
  afterEach(() => host.dispose());

  it('writes the config file and the installed volume as one operation', async () => {
    const result = await installer.install(
      host,
      await request(host, CONFIG_V1),
      host.writer(routerDomain),
    );

    expect(result.verified).to.equal(true);
    expect(await host.readText(CONFIG)).to.equal(CONFIG_V1);
    expect(await host.readText(VOLUME)).to.equal(CONFIG_V1);
    expect(result.files.map((f) => [f.path, f.unchanged])).to.deep.equal([
      [CONFIG, false],
      [VOLUME, false],
    ]);
    expect(result.actions.map((a) => [a.kind, a.status])).to.deep.equal([
      ['write-volume', 'ok'],
      ['reload', 'skipped'], // no reload action configured for this host
    ]);
    expect(host.processes.calls).to.deep.equal([]);
  });

  it('resolves secrets on the node into both files, and reports none of them', async () => {
    const result = await installer.install(
      host,
      await request(host, `${CONFIG_V1}token: {{ secret.ROUTER_TOKEN }}\n`),
      host.writer(routerDomain),
    );
    expect(await host.readText(VOLUME)).to.contain('token: canary-7f3a\n');
    expect(await host.readText(CONFIG)).to.equal(await host.readText(VOLUME));
    expect(JSON.stringify(result)).not.to.contain('canary-7f3a');
  });

  it('rewrites a volume edited by hand even when the config file is current', async () => {
    await installer.install(host, await request(host, CONFIG_V1), host.writer(routerDomain));
    await host.writeFile(VOLUME, 'edited: by hand\n');

    const result = await installer.install(
      host,
      await request(host, CONFIG_V1),
      host.writer(routerDomain),
    );
    expect(result.files.map((f) => [f.path, f.unchanged])).to.deep.equal([
      [CONFIG, true],
      [VOLUME, false],
    ]);
    expect(await host.readText(VOLUME)).to.equal(CONFIG_V1);
    // The hand edit is not lost: the writer backed it up.
    const backups = await readdir(host.resolve('~/.local/state/fleet/backups/router'));
    expect(backups.filter((name) => name.startsWith('volume-'))).to.have.length(1);
  });

  it('refuses content that is not YAML once its secrets are resolved: nothing is written', async () => {
    // A value that breaks the YAML only once it is in place: `token: s3cret: x`.
    await host.writeEnvFile('.config/fleet/env', { ROUTER_TOKEN: 's3cret: x' });
    const refused = await failure(
      installer.install(
        host,
        await request(host, `${CONFIG_V1}token: {{ secret.ROUTER_TOKEN }}\n`),
        host.writer(routerDomain),
      ),
    );
    expect(refused.code).to.equal('FORMAT_UNSUPPORTED');
    expect(refused.message)
      .to.match(/router\.yaml:3: not valid YAML/)
      .and.not.contain('s3cret');
    expect(await host.exists(CONFIG)).to.equal(false);
    expect(await host.exists(VOLUME)).to.equal(false);
  });

  it('refuses a volume path the node policy does not list before writing anything', async () => {
    const refused = await failure(
      installer.install(
        host,
        await request(host, CONFIG_V1, {
          [derivedPathParameter('volume')]: '~/.ssh/authorized_keys',
        }),
        host.writer(routerDomain),
      ),
    );
    expect(refused.code).to.equal('POLICY_REFUSED');
    expect(refused.message).to.contain('domains.router.paths');
    expect(await host.exists(CONFIG)).to.equal(false);
  });

  it('writes the volume at a per-host path the node policy lists for it', async () => {
    await host.setPolicy({
      domains: { router: { paths: { volume: ['~/srv/router/*/volume.yaml'] } } },
    });
    const moved = '~/srv/router/blue/volume.yaml';
    const result = await installer.install(
      host,
      await request(host, CONFIG_V1, { [derivedPathParameter('volume')]: moved }),
      host.writer(routerDomain),
    );
    expect(result.files.map((f) => f.path)).to.deep.equal([CONFIG, moved]);
    expect(await host.readText(moved)).to.equal(CONFIG_V1);
    expect(await host.exists(VOLUME)).to.equal(false);
  });

  it('restores the config file when the volume cannot be written: both or neither', async () => {
    await host.writeFile(CONFIG, CONFIG_V1);
    const writer = host.writer(routerDomain, { failReplaceOf: VOLUME });
    const refused = await failure(installer.install(host, await request(host, CONFIG_V2), writer));

    expect(refused.code).to.equal('IO_ERROR');
    expect(await host.readText(CONFIG)).to.equal(CONFIG_V1); // put back from its backup
    expect(await host.exists(VOLUME)).to.equal(false);
    expect(writer.restored.map((r) => r.path)).to.deep.equal([CONFIG]);
  });

  it("runs the node policy's reload action by id: its argv, no shell, no added environment, its timeout", async () => {
    host.processes.on('/usr/bin/routerctl reload', { exitCode: 0 });
    const result = await installer.install(
      host.forDomain('router'),
      await request(host, CONFIG_V1, {}, RELOAD_ACTION),
      host.writer(routerDomain),
    );
    expect(result.actions.map((a) => [a.kind, a.status])).to.deep.equal([
      ['write-volume', 'ok'],
      ['reload', 'ok'],
    ]);
    const [call] = host.processes.calls;
    expect(call).to.deep.include({ command: '/usr/bin/routerctl', args: ['reload', '--graceful'] });
    expect(call?.env).to.equal(undefined); // the runner hands the child its minimal environment
    expect(call?.extraEnv).to.equal(undefined);
    expect(call?.timeoutMs).to.equal(5_000); // the policy's timeoutSeconds
    expect(host.actionRuns).to.deep.equal([
      { id: 'router-reload', argv: RELOAD, exitCode: 0, timedOut: false },
    ]);
  });

  it('keeps what the reload printed on the node unless its policy entry says output: return', async () => {
    await installer.install(host, await request(host, CONFIG_V1), host.writer(routerDomain));
    host.processes.on('/usr/bin/routerctl', { exitCode: 0 });
    host.processes.on('/usr/bin/routerctl', { exitCode: 1, stderr: 'token canary-7f3a bad\n' }, 1);
    const quiet = await failure(
      installer.install(
        host.forDomain('router'),
        await request(host, CONFIG_V2, {}, RELOAD_ACTION),
        host.writer(routerDomain),
      ),
    );
    expect(quiet.message).to.contain('exited 1').and.not.contain('bad');
    expect(JSON.stringify(quiet.actions)).to.not.contain('bad');

    await host.setPolicy({
      domains: {
        router: {
          actions: { 'router-reload': { argv: RELOAD, output: 'return', outputBytes: 12 } },
        },
      },
    });
    host.processes.on('/usr/bin/routerctl', { exitCode: 1, stderr: 'token canary-7f3a bad\n' }, 1);
    const told = await failure(
      installer.install(
        host.forDomain('router'),
        await request(host, CONFIG_V2, {}, RELOAD_ACTION),
        host.writer(routerDomain),
      ),
    );
    // Redacted back to the secret's name, then cut to the policy's 12 bytes.
    expect(told.message).to.contain('exited 1: token {{ sec…').and.not.contain('canary-7f3a');
  });

  it('does not reload when nothing changed', async () => {
    host.processes.on('/usr/bin/routerctl', { exitCode: 0 });
    await installer.install(
      host.forDomain('router'),
      await request(host, CONFIG_V1, {}, RELOAD_ACTION),
      host.writer(routerDomain),
    );
    const again = await installer.install(
      host.forDomain('router'),
      await request(host, CONFIG_V1, {}, RELOAD_ACTION),
      host.writer(routerDomain),
    );
    expect(again.actions.find((a) => a.kind === 'reload')).to.include({ status: 'skipped' });
    expect(host.processes.calls).to.have.length(1);
  });

  it('restores both files when the reload fails, reloads the restored config, and fails the install', async () => {
    await installer.install(host, await request(host, CONFIG_V1), host.writer(routerDomain));
    // The reload rejects the new config, then accepts the restored one.
    host.processes.on('/usr/bin/routerctl', { exitCode: 0 });
    host.processes.on('/usr/bin/routerctl', { exitCode: 3, stderr: 'bad listen address\n' }, 1);

    const refused = await failure(
      installer.install(
        host.forDomain('router'),
        await request(host, CONFIG_V2, {}, RELOAD_ACTION),
        host.writer(routerDomain),
      ),
    );
    expect(refused.code).to.equal('ACTION_FAILED'); // the controller answers it rolled back, exit 6
    expect(refused.message).to.contain('exited 3').and.contain('restored');
    expect(await host.readText(CONFIG)).to.equal(CONFIG_V1);
    expect(await host.readText(VOLUME)).to.equal(CONFIG_V1);
    expect(host.processes.commandLines()).to.deep.equal([
      '/usr/bin/routerctl reload --graceful',
      '/usr/bin/routerctl reload --graceful',
    ]);
    expect(refused.actions).to.deep.equal([
      {
        kind: 'write-volume',
        status: 'rolled-back',
        detail: `${VOLUME} restored with the config file`,
      },
      {
        kind: 'reload',
        status: 'failed',
        detail: 'action router-reload (/usr/bin/routerctl) exited 3',
      },
      {
        kind: 'reload',
        status: 'ok',
        detail: 'after the restore: action router-reload (/usr/bin/routerctl) exited 0',
      },
    ]);
  });

  it('refuses a reload action id the node policy does not define before writing anything', async () => {
    const refused = await failure(
      installer.install(
        host.forDomain('router'),
        await request(host, CONFIG_V1, {}, { reload: 'rm-rf-home' }),
        host.writer(routerDomain),
      ),
    );
    expect(refused.code).to.equal('POLICY_REFUSED');
    expect(await host.exists(CONFIG)).to.equal(false);
    expect(host.processes.calls).to.deep.equal([]);
  });

  it('refuses a stale plan (compare and swap): nothing written', async () => {
    const planned = await request(host, CONFIG_V2);
    await host.writeFile(CONFIG, 'changed: meanwhile\n');
    const refused = await failure(installer.install(host, planned, host.writer(routerDomain)));
    expect(refused.code).to.equal('PRECONDITION_FAILED');
    expect(await host.readText(CONFIG)).to.equal('changed: meanwhile\n');
    expect(await host.exists(VOLUME)).to.equal(false);
  });
});
