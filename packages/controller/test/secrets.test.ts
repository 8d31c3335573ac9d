/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * Secrets never transit (contract §1.5, §15; catalogue F41, F43): after every kind of operation, the
 * canary from the node's env chain is in the installed file and in nothing that left the node or
 * that the node logs — responses, receipts, the audit log, operation records, journals.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { APP, SECOND, SVC } from './support/fixture-registry.js';
import { install, sha256 } from './support/install.js';
import { newId, startNode, type Answer, type TestNode } from './support/node.js';

async function stateFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'backups') continue; // copies of live files: they hold what the files hold
    // The values those files hold, remembered for redaction (docs/secrets.md): 0600 like them.
    if (entry.name === 'secret-memory.json') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await stateFiles(path)));
    else out.push(path);
  }
  return out;
}

describe('the canary secret', () => {
  let node: TestNode;
  before(async () => {
    node = await startNode();
  });
  after(async () => node.dispose());

  it('is installed, and appears in no response, receipt, audit line or operation record', async () => {
    const token = await node.issue(['config:read', 'config:install', 'config:adopt']);
    const answers: Answer[] = [];
    const template = 'api_key={{ secret.CANARY }}\nurl=postgres://u:{{ secret.CANARY }}@h/db\n';
    answers.push(
      await install(node, token, 'fixture', [{ path: APP, fileId: 'app.conf', content: template }]),
    );
    expect(await readFile(node.abs(APP), 'utf8')).to.contain(node.canary);
    // A change to a secret-bearing line: its diff is in template space.
    answers.push(
      await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: `${template}extra=1\n` },
      ]),
    );
    answers.push(await node.call('/v1/export', { token, body: { path: APP } }));
    answers.push(
      await node.call('/v1/capture', { token, body: { operationId: newId(), path: APP } }),
    );
    answers.push(
      await node.call('/v1/probe', { token, body: { prober: 'fixture.facts', parameters: {} } }),
    );
    answers.push(await node.call('/v1/inventory', { token }));
    // A precondition failure on the secret file.
    answers.push(
      await install(node, token, 'fixture', [
        { path: APP, fileId: 'app.conf', content: 'x\n', expectedSha256: sha256('nope') },
      ]),
    );
    // A rolled-back install whose diff would show the secret.
    answers.push(
      await install(
        node,
        token,
        'coupled',
        [{ path: SVC, fileId: 'svc.yaml', content: 'key: {{ secret.CANARY }}\n' }],
        { parameters: { action: 'fail' } },
      ),
    );
    // A live file holding the secret value, exported and replaced.
    await node.write(SECOND, `raw=${node.canary}\n`);
    answers.push(await node.call('/v1/export', { token, body: { path: SECOND } }));
    answers.push(
      await install(node, token, 'fixture', [
        { path: SECOND, fileId: 'second.conf', content: 'raw=gone\n' },
      ]),
    );
    const backup = answers[answers.length - 1]?.body.files[0].backupPath as string;
    answers.push(await node.call('/v1/export', { token, body: { path: backup } }));
    for (const answer of [...answers]) {
      if (answer.body.operationId)
        answers.push(await node.call(`/v1/operations/${answer.body.operationId}`, { token }));
    }

    expect(answers[0]?.status).to.equal(200);
    expect(answers[1]?.body.files[0].diff).to.contain('{{ secret.CANARY }}');
    expect(answers.filter((a) => a.body.state === 'completed').length).to.be.greaterThan(2);
    for (const answer of answers) expect(answer.text).to.not.contain(node.canary);
    const files = await stateFiles(join(node.home, '.local/state/fleet'));
    expect(files.some((file) => file.endsWith('audit.jsonl'))).to.equal(true);
    for (const file of files)
      expect(await readFile(file, 'latin1'), file).to.not.contain(node.canary);
  });
});
