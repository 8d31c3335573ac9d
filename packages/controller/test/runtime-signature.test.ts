/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/**
 * Signatures the node checks (issue 36, ADR 0019): a runtime stage needs a `fleet-release` SSH
 * signature over the artifact's exact bytes by a key of the node policy's `runtime.trustedKeys`
 * — or, on a node whose policy says `runtime.allowUnsigned`, none. Checked before anything is
 * journaled or written, for an upload and for a held generation (against its `artifact.tgz`);
 * every runtime change needs `bootstrap.allow`, an upgrade's too. Signatures made by the real
 * `ssh-keygen -Y sign`, a real controller, real files.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  ERROR_CODES,
  ExitCode,
  FleetError,
  parseSshEd25519PublicKey,
  signatureBody,
  type NodeRuntimePolicy,
} from '@fleet/core';
import { SYSTEM_TOOLS, requireSystemTools } from '@fleet/testkit';
import { stageGeneration } from '../src/generations/generation.js';
import { admissionDetail, admitRelease } from '../src/lifecycle/signature.js';
import { newId, startNode, type PolicyInput, type TestNode } from './support/node.js';
import { stageBody, stagingRegistry } from './support/staging.js';

const GENERATIONS = '~/.local/share/fleet/runtime/generations';
const JOURNAL = '~/.local/state/fleet/journal/runtime.jsonl';
const AUDIT = '~/.local/state/fleet/audit.jsonl';

/** A real ssh-keygen Ed25519 key in `dir`: its file and its public key line. */
function keygen(dir: string, name: string): { file: string; line: string } {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@seat`, '-f', file]);
  return {
    file,
    line: execFileSync('cat', [`${file}.pub`])
      .toString()
      .trim(),
  };
}

/** `ssh-keygen -Y sign -n NAMESPACE` over `bytes`: the armored signature. */
async function sign(
  dir: string,
  key: string,
  bytes: Buffer,
  namespace = 'fleet-release',
): Promise<string> {
  const file = join(dir, `${newId()}.tgz`);
  await writeFile(file, bytes);
  execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', namespace, file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return readFile(`${file}.sig`, 'utf8');
}

describe('release signatures at stage (issue 36, ADR 0019)', function () {
  this.timeout(60_000);
  let dir: string;
  let release: { file: string; line: string };
  let stranger: { file: string; line: string };

  before(async function () {
    requireSystemTools(this, [SYSTEM_TOOLS.sshKeygen], 'release signatures are made by ssh-keygen');
    dir = await mkdtemp(join(tmpdir(), 'fleet-signature-'));
    release = keygen(dir, 'release');
    stranger = keygen(dir, 'stranger');
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('admitRelease: the policy, the signature and the bytes (a table)', () => {
    const bytes = Buffer.from('the artifact, byte for byte\n');
    type Row = [
      title: string,
      runtime: () => NodeRuntimePolicy | undefined,
      signature: () => Promise<string | undefined>,
      expected: 'signed' | 'unsigned' | 'ARTIFACT_UNSIGNED' | 'SIGNATURE_INVALID',
    ];
    const trusting = (): NodeRuntimePolicy => ({
      trustedKeys: [release.line],
      allowUnsigned: false,
    });
    const rows: Row[] = [
      [
        'no runtime section, no signature',
        () => undefined,
        () => Promise.resolve(undefined),
        'ARTIFACT_UNSIGNED',
      ],
      [
        'a trusted key, no signature',
        trusting,
        () => Promise.resolve(undefined),
        'ARTIFACT_UNSIGNED',
      ],
      [
        'allowUnsigned, no signature',
        () => ({ trustedKeys: [], allowUnsigned: true }),
        () => Promise.resolve(undefined),
        'unsigned',
      ],
      ['a trusted key, its signature', trusting, () => sign(dir, release.file, bytes), 'signed'],
      [
        'a trusted key, its signature as one line',
        trusting,
        async () => signatureBody(await sign(dir, release.file, bytes)),
        'signed',
      ],
      [
        'a trusted key and allowUnsigned, its signature',
        () => ({ trustedKeys: [release.line], allowUnsigned: true }),
        () => sign(dir, release.file, bytes),
        'signed',
      ],
      [
        'a trusted key, a stranger signed',
        trusting,
        () => sign(dir, stranger.file, bytes),
        'SIGNATURE_INVALID',
      ],
      [
        'allowUnsigned and a bad signature: a signature sent is always checked',
        () => ({ trustedKeys: [release.line], allowUnsigned: true }),
        () => sign(dir, stranger.file, bytes),
        'SIGNATURE_INVALID',
      ],
      [
        'allowUnsigned, no trusted key, a signature',
        () => ({ trustedKeys: [], allowUnsigned: true }),
        () => sign(dir, release.file, bytes),
        'SIGNATURE_INVALID',
      ],
      [
        'a trusted key, its signature over other bytes',
        trusting,
        () => sign(dir, release.file, Buffer.concat([bytes, Buffer.from('one more line\n')])),
        'SIGNATURE_INVALID',
      ],
      [
        'a trusted key, its signature in another namespace',
        trusting,
        () => sign(dir, release.file, bytes, 'git'),
        'SIGNATURE_INVALID',
      ],
    ];
    for (const [title, runtime, signature, expected] of rows) {
      it(`${title}: ${expected}`, async () => {
        const sig = await signature();
        let outcome: string;
        try {
          const admission = admitRelease(runtime(), sig, bytes);
          outcome = admission.signed ? 'signed' : 'unsigned';
          if (admission.signed) {
            expect(admission.fingerprint).to.equal(
              parseSshEd25519PublicKey(release.line).fingerprint,
            );
            expect(admissionDetail(admission)).to.equal(`signed by ${admission.fingerprint}`);
          }
        } catch (error) {
          expect(error).to.be.instanceOf(FleetError);
          outcome = (error as FleetError).code;
          expect((error as FleetError).message).to.match(/nothing was staged$/);
        }
        expect(outcome).to.equal(expected);
      });
    }
    it('both codes are policy refusals: exit 7, HTTP 403', () => {
      for (const code of ['ARTIFACT_UNSIGNED', 'SIGNATURE_INVALID'] as const) {
        expect(ERROR_CODES[code]).to.deep.equal({ exit: ExitCode.policy, http: 403 });
      }
    });
  });

  describe('the stage route', () => {
    let node: TestNode;
    let token: string;
    let scratch: string;
    const policy = (runtime: PolicyInput['runtime'], allow = true): PolicyInput => ({
      bootstrap: allow ? { allow: true, supervisors: ['systemd-user'] } : { allow: false },
      ...(runtime === undefined ? {} : { runtime }),
    });

    beforeEach(async () => {
      node = await startNode({
        registry: await stagingRegistry(),
        policy: policy({ trustedKeys: [release.line] }),
      });
      token = await node.issue(['runtime:upgrade']);
      scratch = await mkdtemp(join(tmpdir(), 'fleet-signature-stage-'));
    });
    afterEach(async () => {
      await node.dispose();
      await rm(scratch, { recursive: true, force: true });
    });

    const journal = async () => (await node.read(JOURNAL))?.toString('utf8') ?? '';
    const generations = async () => readdir(node.abs(GENERATIONS)).catch(() => []);
    const stageAudits = async () =>
      ((await node.read(AUDIT))?.toString('utf8') ?? '')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry['operation'] === 'runtime-stage');
    const signed = async (body: ReturnType<typeof stageBody>, key = release.file) => ({
      ...body,
      artifact: {
        ...body.artifact,
        signature: signatureBody(
          await sign(scratch, key, Buffer.from(body.artifact.content, 'base64')),
        ),
      },
    });
    /** Asserts a refusal left nothing: no generation, no journal, and an audit record of it. */
    async function expectRefused(
      answer: Awaited<ReturnType<TestNode['call']>>,
      operationId: string,
      code: string,
    ) {
      expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([403, code]);
      expect(await generations()).to.deep.equal([]);
      expect(await journal()).to.equal('');
      const record = (await stageAudits()).find((entry) => entry['operationId'] === operationId);
      expect(record, 'the refusal is audited').to.include({ outcome: 'failed', code });
    }

    it('a signature by a trusted key: staged, and the audit record names the signer', async () => {
      const body = await signed(stageBody('2.0.0'));
      const answer = await node.call('/v1/runtime/stage', { token, body });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body).to.not.have.property('admission');
      const fingerprint = parseSshEd25519PublicKey(release.line).fingerprint;
      expect((await stageAudits()).at(-1)?.['detail']).to.equal(
        `runtime-stage ${body.artifact.sha256.slice(0, 12)}: artifact uploaded; signed by ${fingerprint}; answered 200`,
      );
      // The journal's staged record keeps its schema (older generations read it strictly).
      const staged = (await journal())
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { step: string; data: Record<string, unknown> })
        .find((record) => record.step === 'staged');
      expect(Object.keys(staged?.data ?? {}).sort()).to.deep.equal([
        'buildId',
        'reused',
        'treeHash',
      ]);
    });

    it('no signature: ARTIFACT_UNSIGNED (exit 7), nothing staged or journaled, audited', async () => {
      const body = stageBody('2.0.0');
      const answer = await node.call('/v1/runtime/stage', { token, body });
      await expectRefused(answer, body.operationId, 'ARTIFACT_UNSIGNED');
      expect(answer.body.error.message).to.contain('without a release signature');
    });

    it('a policy without a runtime section refuses an unsigned runtime change', async () => {
      await node.setPolicy(policy(undefined));
      const body = stageBody('2.0.0');
      const answer = await node.call('/v1/runtime/stage', { token, body });
      await expectRefused(answer, body.operationId, 'ARTIFACT_UNSIGNED');
      expect(answer.body.error.message).to.contain('it trusts no key yet');
    });

    it('a stranger signed: SIGNATURE_INVALID naming its fingerprint, nothing staged, audited', async () => {
      const body = await signed(stageBody('2.0.0'), stranger.file);
      const answer = await node.call('/v1/runtime/stage', { token, body });
      await expectRefused(answer, body.operationId, 'SIGNATURE_INVALID');
      expect(answer.body.error.message).to.contain(
        parseSshEd25519PublicKey(stranger.line).fingerprint,
      );
    });

    it("another artifact's signature: SIGNATURE_INVALID, nothing staged", async () => {
      const other = await signed(stageBody('2.0.1'));
      const body = { ...stageBody('2.0.0') };
      const tampered = {
        ...body,
        artifact: { ...body.artifact, signature: other.artifact.signature },
      };
      const answer = await node.call('/v1/runtime/stage', { token, body: tampered });
      await expectRefused(answer, body.operationId, 'SIGNATURE_INVALID');
      expect(answer.body.error.message).to.contain('does not verify');
    });

    it('a held generation is checked against its own artifact.tgz, before anything is journaled', async () => {
      const body = await signed(stageBody('2.0.0'));
      const tgz = join(scratch, 'held.tgz');
      await writeFile(tgz, Buffer.from(body.artifact.content, 'base64'));
      await stageGeneration({
        home: node.home,
        platform: process.platform as 'linux',
        artifact: tgz,
        sha256: body.artifact.sha256,
      });
      const { content, ...held } = body.artifact;
      void content;
      const wrong = await signed(stageBody('2.0.1'));
      const refused = await node.call('/v1/runtime/stage', {
        token,
        body: { ...body, artifact: { ...held, signature: wrong.artifact.signature } },
      });
      expect([refused.status, refused.body.error?.code], refused.text).to.deep.equal([
        403,
        'SIGNATURE_INVALID',
      ]);
      expect(await journal()).to.equal('');
      const unsigned = await node.call('/v1/runtime/stage', {
        token,
        body: { ...body, operationId: newId(), artifact: { ...held, signature: undefined } },
      });
      expect(unsigned.body.error?.code, unsigned.text).to.equal('ARTIFACT_UNSIGNED');
      expect(await journal()).to.equal('');

      const answer = await node.call('/v1/runtime/stage', {
        token,
        body: { ...body, operationId: newId(), artifact: held },
      });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body).to.include({ reused: true });
      expect((await stageAudits()).at(-1)?.['detail']).to.match(
        /held generation reused, not uploaded; signed by SHA256:\S+; answered 200$/,
      );
    });

    it('allowUnsigned without a signature stages as before; the audit record says so', async () => {
      await node.setPolicy(policy({ allowUnsigned: true }));
      const body = stageBody('2.0.0');
      const answer = await node.call('/v1/runtime/stage', { token, body });
      expect(answer.status, answer.text).to.equal(200);
      expect((await stageAudits()).at(-1)?.['detail']).to.match(
        /artifact uploaded; unsigned, allowed by runtime\.allowUnsigned; answered 200$/,
      );
    });

    it('an upgrade needs bootstrap.allow as a bootstrap does: BOOTSTRAP_REFUSED, "runtime changes"', async () => {
      await node.setPolicy(policy({ trustedKeys: [release.line] }, false));
      const body = await signed(stageBody('2.0.0'));
      expect(body.kind).to.equal('upgrade');
      const answer = await node.call('/v1/runtime/stage', { token, body });
      expect([answer.status, answer.body.error?.code], answer.text).to.deep.equal([
        403,
        'BOOTSTRAP_REFUSED',
      ]);
      expect(answer.body.error.message).to.contain('denies runtime changes');
      expect(await generations()).to.deep.equal([]);
      expect(await journal()).to.equal('');
    });
  });
});
