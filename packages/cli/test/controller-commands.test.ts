/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * `fleet controller serve` and `fleet token issue|list|rotate|revoke`, run as real processes of
 * the built CLI against temp homes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

function fleet(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('fleet token and fleet controller serve', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-cli-node-'));
  });
  after(async () => rm(home, { recursive: true, force: true }));

  it('issues, lists, rotates and revokes tokens with the --json shapes of contract §7', async () => {
    const issued = fleet([
      'token',
      'issue',
      '--client',
      'laptop',
      '--scope',
      'config:read',
      '--scope',
      'config:install',
      '--home',
      home,
      '--json',
    ]);
    expect(issued.status, issued.stderr).to.equal(0);
    const token = JSON.parse(issued.stdout);
    expect(Object.keys(token).sort()).to.deep.equal([
      'client',
      'expiresAt',
      'id',
      'scopes',
      'token',
    ]);
    expect(token).to.include({ client: 'laptop' });
    expect(token.scopes).to.deep.equal(['config:read', 'config:install']);
    const store = await readFile(join(home, '.local/state/fleet/tokens.json'), 'utf8');
    expect(store).to.not.contain(token.token);

    const listed = JSON.parse(fleet(['token', 'list', '--home', home, '--json']).stdout);
    expect(listed.tokens).to.have.length(1);
    expect(listed.tokens[0]).to.include({ id: token.id, state: 'active' });
    expect(JSON.stringify(listed)).to.not.contain(token.token);
    expect(listed.tokens[0]).to.not.have.property('sha256');

    const rotated = JSON.parse(
      fleet(['token', 'rotate', token.id, '--grace', '5m', '--home', home, '--json']).stdout,
    );
    expect(rotated).to.include({ rotatedFrom: token.id, client: 'laptop' });
    expect(rotated.id).to.not.equal(token.id);

    const revoked = fleet(['token', 'revoke', rotated.id, '--home', home, '--json']);
    expect(revoked.status).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ id: rotated.id });
    const states = JSON.parse(fleet(['token', 'list', '--home', home, '--json']).stdout).tokens.map(
      (t: { state: string }) => t.state,
    );
    expect(states).to.deep.equal(['grace', 'revoked']);
  });

  it('refuses a misspelled scope with exit 2 and the JSON error envelope', () => {
    const result = fleet([
      'token',
      'issue',
      '--client',
      'x',
      '--scope',
      'Config:Install',
      '--home',
      home,
      '--json',
    ]);
    expect(result.status).to.equal(2);
    expect(JSON.parse(result.stdout).error).to.include({ code: 'USAGE', exitCode: 2 });
  });

  it('serves on an ephemeral port, prints one JSON line, answers identity, and stops on SIGTERM', async () => {
    const token = JSON.parse(
      fleet([
        'token',
        'issue',
        '--client',
        'op',
        '--scope',
        'config:read',
        '--home',
        home,
        '--json',
      ]).stdout,
    ).token;
    const child = spawn(
      process.execPath,
      [BIN, 'controller', 'serve', '--home', home, '--node-id', 'node-07', '--port', '0', '--json'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0] as string);
      });
      void exited.then((code) => reject(new Error(`serve exited ${code}`)));
    });
    const started = JSON.parse(line);
    expect(started).to.include({ nodeId: 'node-07' });
    expect(started.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${started.url}/v1/identity`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).to.equal(200);
    const identity = (await response.json()) as {
      nodeId: string;
      catalog: {
        domains: { domain: string }[];
        bootstrapAdapters: { supervisor: string; plugin: string }[];
      };
    };
    expect(identity.nodeId).to.equal('node-07');
    expect(identity.catalog.domains.map((d) => d.domain)).to.include.members([
      'router',
      'transport-identity',
      'harness-policy',
    ]);
    // The CLI's own fleet:register hook adds the lab supervisor's adapter.
    expect(
      identity.catalog.bootstrapAdapters.map((a) => `${a.supervisor} ${a.plugin}`),
    ).to.include.members([
      'lab @fleet/cli',
      'systemd-user @fleet/plugin-bootstrap-systemd',
      'windows-task @fleet/plugin-bootstrap-windows',
    ]);
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
