/**
 * Tokens rotated from the operator seat (contract §5 "Tokens", §7 `fleet token … --host H`) on a lab
 * host, through the real CLI: the operator's own token rotated — the credentials file holds the new
 * one (0600, replaced atomically), the old one works during its grace and not after, the new one
 * works; a credentials file readable by others is refused before anything is rotated; another
 * client's token issued, rotated and revoked; and the operator revoking the token it is using:
 * refused without --self, a lockout it asked for with it. The list names each token's issuer and
 * lineage; a revoke says which minted tokens went with it.
 */
import { readFile, chmod, stat } from 'node:fs/promises';
import { expect } from 'chai';
import { createControllerClient, isFleetError } from '@fleet/core';
import { json } from '../src/fleet.js';
import { Lab } from './lab-fixture.js';

interface Rotated {
  id: string;
  token: string;
  rotatedFrom: string;
  graceUntil: string;
  credentialsUpdated: boolean;
}

describe('tokens from the operator seat (fleet token … --host)', function () {
  this.timeout(300_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create('fleet-tokens-e2e-');
    await lab.up(1);
  });
  after(async () => lab?.destroy());

  const credentials = async () =>
    JSON.parse(await readFile(lab.document.credentials, 'utf8')) as {
      hosts: Record<string, { token: string }>;
    };
  /** `GET /v1/identity` with `token`: its error code, or 'ok'. */
  async function identityWith(token: string): Promise<string> {
    const client = createControllerClient({
      host: 'node-01',
      url: lab.host('node-01').controller,
      token,
    });
    try {
      await client.identity();
      return 'ok';
    } catch (error) {
      if (isFleetError(error)) return error.code;
      throw error;
    }
  }
  const list = async () => {
    const run = await lab.run(['token', 'list', '--host', 'node-01', '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    return json<{ self: string; tokens: { id: string; client: string; state: string }[] }>(run);
  };

  it('rotates the operator’s own token: the credentials file holds the new one, the old works only during grace', async () => {
    const old = (await credentials()).hosts['node-01']?.token as string;
    const before = await list();
    expect(before.self).to.equal(old.slice(4, 20));

    // A grace of 8 s holds the three checks below (two requests and one `fleet token list`, about a
    // second here under load); the test then waits it out.
    const run = await lab.run(['token', 'rotate', '--host', 'node-01', '--grace', '8s', '--json']);
    expect(run.exitCode, run.stderr).to.equal(0);
    const rotated = json<Rotated>(run);
    expect(rotated).to.include({ rotatedFrom: before.self, credentialsUpdated: true });
    const file = await credentials();
    expect(file.hosts['node-01']?.token).to.equal(rotated.token);
    expect((await stat(lab.document.credentials)).mode & 0o777).to.equal(0o600);

    expect(await identityWith(old)).to.equal('ok'); // in grace
    expect(await identityWith(rotated.token)).to.equal('ok');
    // every verb now uses the new token from the credentials file
    const after = await list();
    expect(after.self).to.equal(rotated.id);
    expect(after.tokens.find((t) => t.id === before.self)?.state).to.equal('grace');

    // past the grace period the old token is refused, the new one still works
    const wait = Date.parse(rotated.graceUntil) - Date.now() + 1_000;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    expect(await identityWith(old)).to.equal('AUTH_EXPIRED');
    expect(await identityWith(rotated.token)).to.equal('ok');
    // the operator log has the verb, never a token
    const log = await readFile(lab.operatorLog, 'utf8');
    expect(log).to.contain('"verb":"token rotate"');
    expect(log).to.not.contain(rotated.token);
  });

  it('refuses a credentials file readable by others before anything is rotated (exit 4)', async () => {
    const tokens = (await list()).tokens.length;
    await chmod(lab.document.credentials, 0o644);
    try {
      const run = await lab.run(['token', 'rotate', '--host', 'node-01', '--json']);
      expect(run.exitCode, run.stderr).to.equal(4);
      expect(json<{ error: { code: string } }>(run).error.code).to.equal('CREDENTIALS_INSECURE');
    } finally {
      await chmod(lab.document.credentials, 0o600);
    }
    expect((await list()).tokens.length).to.equal(tokens);
  });

  it('issues, rotates and revokes another client’s token, leaving the credentials file alone', async () => {
    const mine = (await credentials()).hosts['node-01']?.token;
    const issued = await lab.run([
      'token',
      'issue',
      '--host',
      'node-01',
      '--client',
      'ci',
      '--scope',
      'config:read',
      '--ttl',
      '1d',
      '--json',
    ]);
    expect(issued.exitCode, issued.stderr).to.equal(0);
    const ci = json<{ id: string; token: string }>(issued);
    expect(await identityWith(ci.token)).to.equal('ok');

    const rotated = await lab.run([
      'token',
      'rotate',
      ci.id,
      '--host',
      'node-01',
      '--grace',
      '1m',
      '--json',
    ]);
    expect(rotated.exitCode, rotated.stderr).to.equal(0);
    const next = json<Rotated>(rotated);
    expect(next.credentialsUpdated).to.equal(false);
    expect(await identityWith(next.token)).to.equal('ok');

    // Both were minted by the operator's token: the list names it as their issuer.
    const listed = await lab.run(['token', 'list', '--host', 'node-01', '--json']);
    const lineage = json<{
      self: string;
      tokens: { id: string; issuedBy: string | null; lineage: string[] }[];
    }>(listed);
    for (const id of [ci.id, next.id]) {
      expect(lineage.tokens.find((t) => t.id === id)?.issuedBy, id).to.equal(lineage.self);
    }
    const table = await lab.run(['token', 'list', '--host', 'node-01']);
    expect(table.stdout).to.match(/ISSUER\s+LINEAGE/);

    const revoked = await lab.run(['token', 'revoke', next.id, '--host', 'node-01', '--json']);
    expect(revoked.exitCode, revoked.stderr).to.equal(0);
    expect(json<{ minted: string[] }>(revoked).minted).to.deep.equal([]);
    expect(await identityWith(next.token)).to.equal('AUTH_REVOKED');
    expect((await credentials()).hosts['node-01']?.token).to.equal(mine);
  });

  it('revoking the token it uses: refused without --self (nothing sent), a lockout with it', async () => {
    const mine = (await credentials()).hosts['node-01']?.token as string;
    const id = mine.slice(4, 20);
    const refused = await lab.run(['token', 'revoke', id, '--host', 'node-01']);
    expect(refused.exitCode, refused.stderr).to.equal(2);
    expect(refused.stderr).to.match(/locks you out of node-01/);
    expect(refused.stderr).to.match(/rotate it instead/);
    expect(await identityWith(mine)).to.equal('ok');

    const revoked = await lab.run(['token', 'revoke', id, '--host', 'node-01', '--self', '--json']);
    expect(revoked.exitCode, revoked.stderr).to.equal(0);
    expect(json<{ self: boolean }>(revoked).self).to.equal(true);
    expect(revoked.stderr).to.match(/still holds this revoked token/);
    const locked = await lab.run(['token', 'list', '--host', 'node-01', '--json']);
    expect(locked.exitCode, locked.stderr).to.equal(4);
    expect(json<{ error: { code: string } }>(locked).error.code).to.equal('AUTH_REVOKED');
  });
});
