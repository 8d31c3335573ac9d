/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * A stage without the artifact's bytes (contract §12): the node stages from the generation it
 * already holds — verified again from its own disk, never trusting the request — or, when it
 * does not hold it verified, answers `GENERATION_NOT_HELD` (exit 3) with nothing staged and
 * nothing journaled, so the operator uploads instead. A real controller, real files.
 */
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ERROR_CODES, ExitCode } from '@fleet/core';
import { stageGeneration } from '../src/generations/generation.js';
import { startNode, type TestNode } from './support/node.js';
import { stageBody, stagingPolicy, stagingRegistry } from './support/staging.js';

const GENERATIONS = '~/.local/share/fleet/runtime/generations';
const JOURNAL = '~/.local/state/fleet/journal/runtime.jsonl';
const AUDIT = '~/.local/state/fleet/audit.jsonl';

/** The body without `artifact.content`: "stage the generation you hold". */
function withoutContent(body: ReturnType<typeof stageBody>) {
  const { content, ...artifact } = body.artifact;
  void content;
  return { ...body, artifact };
}

describe('runtime stage without the artifact: the held generation (contract §12)', function () {
  this.timeout(60_000);
  let node: TestNode;
  let token: string;
  let scratch: string;

  beforeEach(async () => {
    node = await startNode({ registry: await stagingRegistry(), policy: stagingPolicy() });
    token = await node.issue(['runtime:upgrade']);
    scratch = await mkdtemp(join(tmpdir(), 'fleet-held-'));
  });
  afterEach(async () => {
    await node.dispose();
    await rm(scratch, { recursive: true, force: true });
  });

  /** Stages `body`'s artifact on the node as an earlier transaction would have left it. */
  async function holdGeneration(body: ReturnType<typeof stageBody>): Promise<string> {
    const tgz = join(scratch, 'artifact.tgz');
    await writeFile(tgz, Buffer.from(body.artifact.content, 'base64'));
    const staged = await stageGeneration({
      home: node.home,
      platform: process.platform as 'linux',
      artifact: tgz,
      sha256: body.artifact.sha256,
    });
    return staged.directory;
  }

  const journal = async () => (await node.read(JOURNAL))?.toString('utf8') ?? '';
  const lastStageAudit = async () => {
    const lines = ((await node.read(AUDIT))?.toString('utf8') ?? '').trimEnd().split('\n');
    const stages = lines
      .map((line) => JSON.parse(line) as { operation?: string; detail?: string })
      .filter((entry) => entry.operation === 'runtime-stage');
    return stages.at(-1);
  };

  it('a generation the node lists in its status: staged from it, reused, and the audit says it was not uploaded', async () => {
    const body = stageBody('2.0.0');
    await holdGeneration(body);
    const status = await node.call('/v1/runtime/status', { token, body: {} });
    expect(status.body.generations, status.text).to.deep.equal([body.artifact.sha256]);

    const answer = await node.call('/v1/runtime/stage', { token, body: withoutContent(body) });
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body).to.include({ buildId: body.artifact.sha256, reused: true });
    const staged = (await journal())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { step: string; data: { reused?: boolean } })
      .find((record) => record.step === 'staged');
    expect(staged?.data.reused).to.equal(true);
    const audit = await lastStageAudit();
    expect(audit?.detail).to.equal(
      `runtime-stage ${body.artifact.sha256.slice(0, 12)}: held generation reused, not uploaded; unsigned, allowed by runtime.allowUnsigned; answered 200`,
    );
  });

  it('an upload says so in the audit record', async () => {
    const answer = await node.call('/v1/runtime/stage', { token, body: stageBody('2.0.0') });
    expect([answer.status, answer.body.reused], answer.text).to.deep.equal([200, false]);
    expect((await lastStageAudit())?.detail).to.match(
      /: artifact uploaded; unsigned, allowed by runtime.allowUnsigned; answered 200$/,
    );
  });

  it('a generation it does not hold: GENERATION_NOT_HELD (exit 3), nothing staged, nothing journaled', async () => {
    const body = stageBody('2.0.0');
    const answer = await node.call('/v1/runtime/stage', { token, body: withoutContent(body) });
    expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([
      412,
      'GENERATION_NOT_HELD',
    ]);
    expect(ERROR_CODES.GENERATION_NOT_HELD.exit).to.equal(ExitCode.conflict);
    expect(answer.body.error.message).to.contain(`no verified generation ${body.artifact.sha256}`);
    expect(await readdir(node.abs(GENERATIONS)).catch(() => [])).to.deep.equal([]);
    expect(await journal()).to.equal('');
  });

  it('a held generation whose files were tampered with: refused, never staged from, nothing journaled', async () => {
    const body = stageBody('2.0.0');
    const directory = await holdGeneration(body);
    const readme = join(directory, 'package', 'README.md');
    // Edited in place, modes put back: only the tree hash can tell.
    await chmod(join(directory, 'package'), 0o755);
    await chmod(readme, 0o644);
    await writeFile(readme, '# runtime, edited\n');
    await chmod(readme, 0o444);
    await chmod(join(directory, 'package'), 0o555);

    const answer = await node.call('/v1/runtime/stage', { token, body: withoutContent(body) });
    expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([
      412,
      'GENERATION_NOT_HELD',
    ]);
    expect(answer.body.error.message).to.contain('tree hash');
    expect(await journal()).to.equal('');
    expect(await readFile(readme, 'utf8')).to.equal('# runtime, edited\n');
  });
});
