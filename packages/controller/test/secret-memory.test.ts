/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * Rotated and removed secrets never leak (contract §4, §15; issue 11 finding 3; docs/secrets.md):
 * the node remembers every value it resolved while a live file or a backup may hold it, redacts
 * them all (a rotated value back to its name, a removed one to the name it last had), and forgets
 * a value once no file holds it. A value under 8 characters is refused at resolve time, never
 * redacted into text; a hash-valued fact is never rewritten.
 */
import { randomBytes } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { APP } from './support/fixture-registry.js';
import { install, sha256 } from './support/install.js';
import { newId, startNode, type Answer, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function setEnv(node: TestNode, text: string): Promise<void> {
  await writeFile(join(node.home, '.config/fleet/env'), text, { mode: 0o600 });
}

describe('secret memory: rotated and removed values stay redacted', () => {
  let node: TestNode;
  let token: string;
  const old = hex(24); // CANARY before the rotation
  const removed = hex(24); // EXTRA, then removed from the chain
  const rotated = hex(24); // CANARY after the rotation
  const answers: Answer[] = [];
  const memory = () => readFile(join(node.home, STATE, 'secret-memory.json'), 'utf8');
  const call = async (path: string, body?: unknown) => {
    const answer = await node.call(path, { token, ...(body === undefined ? {} : { body }) });
    answers.push(answer);
    return answer;
  };
  const installApp = async (content: string) => {
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content },
    ]);
    answers.push(answer);
    expect(answer.status, answer.text).to.equal(200);
    return answer;
  };

  before(async () => {
    node = await startNode();
    token = await node.issue(['config:read', 'config:install', 'config:adopt']);
    await setEnv(node, `CANARY=${old}\nEXTRA=${removed}\n`);
  });
  after(async () => node.dispose());

  it('remembers the values an install resolved, with the files that hold them', async () => {
    await installApp('key={{ secret.CANARY }}\nextra={{ secret.EXTRA }}\n');
    expect(await readFile(node.abs(APP), 'utf8')).to.equal(`key=${old}\nextra=${removed}\n`);
    const remembered = JSON.parse(await memory()) as {
      values: { name: string; value: string; holders: string[] }[];
    };
    expect(remembered.values).to.deep.equal([
      { name: 'CANARY', value: old, holders: [APP] },
      { name: 'EXTRA', value: removed, holders: [APP] },
    ]);
  });

  it('after the rotation and the removal, export/capture/snapshot show names, never the old values', async () => {
    await setEnv(node, `CANARY=${rotated}\n`);
    const template = 'key={{ secret.CANARY }}\nextra={{ secret.EXTRA }}\n';
    const exported = await call('/v1/export', { path: APP });
    expect(exported.body.content).to.equal(template);
    expect(exported.body.redacted).to.equal(true);
    const captured = await call('/v1/capture', { operationId: newId(), path: APP });
    expect(captured.body.content).to.equal(template);
    const snapshot = await call('/v1/snapshot', {
      files: [{ domain: 'fixture', path: APP }],
      backups: true,
    });
    expect(snapshot.body.files[0].content).to.equal(template);
  });

  it('the install that replaces the file: its receipt diff and its backup are redacted too', async () => {
    const answer = await installApp('key={{ secret.CANARY }}\n');
    const file = answer.body.files[0];
    expect(file.diff).to.contain('-extra={{ secret.EXTRA }}');
    expect(await readFile(node.abs(APP), 'utf8')).to.equal(`key=${rotated}\n`);
    const backup = await call('/v1/export', { path: file.backupPath });
    expect(backup.body.content).to.equal('key={{ secret.CANARY }}\nextra={{ secret.EXTRA }}\n');
    // The backup now holds the old values; the live file the new one.
    const remembered = JSON.parse(await memory()) as {
      values: { name: string; value: string; holders: string[] }[];
    };
    expect(remembered.values.find((v) => v.value === old)?.holders).to.deep.equal([
      file.backupPath,
    ]);
    expect(remembered.values.find((v) => v.value === rotated)?.holders).to.deep.equal([APP]);
  });

  it('survives a restart: the backups are still redacted after it', async () => {
    await node.restart();
    const snapshot = await call('/v1/snapshot', {
      files: [{ domain: 'fixture', path: APP }],
      backups: true,
    });
    expect(snapshot.body.files[0].backups[0].content).to.contain('{{ secret.EXTRA }}');
  });

  it('is forgotten once the last backup holding a value is pruned (fixture keeps 3)', async () => {
    for (const n of [1, 2, 3]) await installApp(`key={{ secret.CANARY }}\nn=${n}\n`);
    const backups = await readdir(join(node.home, STATE, 'backups', 'fixture'));
    expect(backups).to.have.length(3);
    const text = await memory();
    expect(text).to.not.contain(old);
    expect(text).to.not.contain(removed);
    expect(text).to.contain(rotated);
  });

  it('no answer carried an old value, in clear or in part', () => {
    expect(answers.length).to.be.greaterThan(8);
    for (const answer of answers) {
      for (const value of [old, removed, rotated]) {
        expect(answer.text).to.not.contain(value);
        expect(answer.text).to.not.contain(value.slice(0, 16));
      }
    }
  });
});

describe('short secrets and hash-valued facts', () => {
  let node: TestNode;
  let token: string;
  before(async () => {
    node = await startNode();
    token = await node.issue(['config:read', 'config:install']);
  });
  after(async () => node.dispose());

  it('a value under 8 characters is refused at install with its name (SECRET_TOO_SHORT, 422), nothing written', async () => {
    await setEnv(node, `SHORTY=a\nCANARY=${node.canary}\n`);
    const answer = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'm{{ secret.SHORTY }}tch {{ secret.CANARY }}\n' },
    ]);
    expect(answer.status).to.equal(422);
    expect(answer.body.error.code).to.equal('SECRET_TOO_SHORT');
    expect(answer.body.error.message).to.contain('SHORTY');
    expect(await node.read(APP)).to.equal(undefined);
    expect(await readdir(join(node.home, STATE, 'backups'))).to.deep.equal([]);
  });

  it('…and never redacted into text: a file that merely contains it is exported as it is', async () => {
    await node.write(APP, 'match a 30\n');
    await setEnv(node, `SHORTY=a\nTHIRTY=30\nCANARY=${node.canary}\n`);
    const exported = await node.call('/v1/export', { token, body: { path: APP } });
    expect(exported.body.content).to.equal('match a 30\n');
    expect(exported.body.redacted).to.equal(false);
  });

  it("a prober's sha256 fact is unchanged by a secret that happens to be a substring of it", async () => {
    await node.write(APP, `api_key=${node.canary}\n`);
    const digest = sha256(`api_key=${node.canary}\n`);
    await setEnv(node, `CANARY=${node.canary}\nHEXISH=${digest.slice(10, 22)}\n`);
    const probe = await node.call('/v1/probe', {
      token,
      body: { prober: 'fixture.digest', parameters: {} },
    });
    expect(probe.status, probe.text).to.equal(200);
    expect(probe.body.facts).to.deep.equal({ path: APP, sha256: digest, note: `digest ${digest}` });
    const snapshot = await node.call('/v1/snapshot', {
      token,
      body: {
        files: [{ domain: 'fixture', path: APP }],
        backups: false,
        probes: [{ prober: 'fixture.digest', domain: 'fixture', parameters: {} }],
      },
    });
    expect(snapshot.body.probes[0].facts.sha256).to.equal(digest);
    expect(snapshot.body.files[0].sha256).to.equal(digest);
    // Error text quoting the digest keeps it whole as well.
    const refused = await install(node, token, 'fixture', [
      { path: APP, fileId: 'app.conf', content: 'x\n', expectedSha256: sha256('other') },
    ]);
    expect(refused.body.error.code).to.equal('PRECONDITION_FAILED');
    expect(refused.body.error.message).to.contain(digest);
  });
});
