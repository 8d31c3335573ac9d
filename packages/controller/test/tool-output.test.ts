/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * A refused validation shows the tool's output (issue 40, contract §7.1), through a real
 * controller: the node policy's validate action, run by core's `wholeFileInstaller` on the staged
 * file, prints why it refuses over several lines; the answer carries the tail of that output as
 * `error.toolOutput` — redacted with the node's env-file values, only where the policy entry says
 * `output: return`, and only for a request that asked (`toolOutput: true`, contract §5.2) — and
 * the operator's client hands it on, typed, on the `ACTION_FAILED` error. The node's own records
 * (journal, operation record, audit log) never hold it.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  createControllerClient,
  errorEnvelope,
  installThrough,
  isFleetError,
  type FleetErrorLike,
} from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { install, installBody } from './support/install.js';
import { startNode, type TestNode } from './support/node.js';

const STATE = '.local/state/fleet';

// The check: refuses a file holding "Bad", saying why over several lines on both streams, the
// node's env file (its secret values) among them.
const CHECK = [
  "const fs = require('fs');",
  'const file = process.argv[1];',
  "if (!fs.readFileSync(file, 'utf8').includes('Bad')) process.exit(0);",
  "process.stdout.write('checking ' + file + '\\n');",
  'process.stderr.write(\'line 1: bad option "Bad"\\nenv: \' +',
  "  fs.readFileSync(process.env.HOME + '/.config/fleet/env', 'utf8'));",
  'process.exit(1);',
].join(' ');

describe("install: a refused validate action's output reaches the operator", () => {
  let node: TestNode;
  let token: string;
  const refuse = (validate: string, toolOutput?: true) =>
    install(node, token, 'fixture', [{ path: APP, fileId: 'app.conf', content: 'Bad line\n' }], {
      actions: { validate },
      ...(toolOutput ? { toolOutput } : {}),
    });

  beforeEach(async () => {
    node = await startNode({
      policy: {
        domains: {
          fixture: {
            actions: {
              'check-said': { argv: [process.execPath, '-e', CHECK, '{file}'], output: 'return' },
              'check-quiet': { argv: [process.execPath, '-e', CHECK, '{file}'] },
            },
          },
        },
      },
    });
    token = await node.issue(['config:install', 'config:read']);
    await node.write(APP, 'good\n');
  });
  afterEach(() => node.dispose());

  it('answers the tail of its output, redacted, under the ACTION_FAILED error; the file is kept', async () => {
    const answer = await refuse('check-said', true);
    expect(answer.status, answer.text).to.equal(500);
    const { code, message, toolOutput } = answer.body.error as FleetErrorLike;
    expect(code).to.equal('ACTION_FAILED');
    expect(message).to.contain('the validate action check-said refused the new');
    const lines = (toolOutput ?? '').split('\n');
    // the staged file the check read, named by the path it would replace
    expect(lines[0]).to.equal(`checking ${APP}`);
    expect(lines.slice(1)).to.deep.equal([
      'line 1: bad option "Bad"',
      'env: CANARY={{ secret.CANARY }}',
      'DB_PASSWORD="{{ secret.DB_PASSWORD }}"',
    ]);
    expect(answer.text).to.not.contain(node.canary).and.not.contain('p@ss word');
    expect(String(await node.read(APP))).to.equal('good\n');
    // Only in the answer: the node's records keep the one-line message (and the audit record the
    // argv, the script's text), not the lines the tool printed.
    const dir = join(node.home, STATE, 'operations');
    const records = await Promise.all(
      (await readdir(dir)).map((name) => readFile(join(dir, name), 'utf8')),
    );
    const audit = await readFile(join(node.home, STATE, 'audit.jsonl'), 'utf8');
    expect([audit, ...records].join('\n'))
      .to.contain('check-said')
      .and.not.contain('{{ secret.CANARY }}');
  });

  it('answers none to a request that did not ask, or where the policy keeps the output', async () => {
    const unasked = await refuse('check-said');
    expect(unasked.body.error.code).to.equal('ACTION_FAILED');
    expect(unasked.body.error).to.not.have.property('toolOutput');
    const discarded = await refuse('check-quiet', true);
    expect(discarded.body.error.code).to.equal('ACTION_FAILED');
    expect(discarded.body.error).to.not.have.property('toolOutput');
  });

  it("the operator's client carries it on the error, and --json's envelope names it", async () => {
    const client = createControllerClient({ host: 'node-01', url: node.url, token });
    const body = await installBody(
      node,
      'fixture',
      [{ path: APP, fileId: 'app.conf', content: 'Bad line\n' }],
      { actions: { validate: 'check-said' }, toolOutput: true },
    );
    let failure: unknown;
    try {
      await installThrough(client, body);
    } catch (error) {
      failure = error;
    } finally {
      client.close();
    }
    if (!isFleetError(failure)) throw new Error(`expected a refusal, got ${String(failure)}`);
    expect([failure.code, failure.exitCode]).to.deep.equal(['ACTION_FAILED', 6]);
    expect(failure.toolOutput).to.contain('line 1: bad option "Bad"\nenv: CANARY=');
    expect(errorEnvelope(failure).error.toolOutput).to.equal(failure.toolOutput);
  });
});
