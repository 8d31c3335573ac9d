/**
 * Signatures the node checks (issue 36, ADR 0019) on a real node: the packed runtime running as a
 * unit of a real `systemd --user` manager (test/src/runtime-node.ts), whose policy trusts one
 * release key made by the real `ssh-keygen`. A second build signed by that key
 * (`ssh-keygen -Y sign -n fleet-release`) is staged and accepted; the same build with a byte
 * changed, repacked with one line added, or with a carried plugin swapped in and its pin made to
 * agree — each with the original signature — and a build
 * signed by a key the node does not trust are refused at stage (`SIGNATURE_INVALID`, exit 7):
 * no generation directory made, no journal transaction opened, and the refusal in the node's
 * audit log.
 */
import { execFileSync } from 'node:child_process';
import { appendFile, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  newOperationId,
  parseSshEd25519PublicKey,
  runtimeLayout,
  signatureBody,
  type RuntimeStageRequest,
} from '@fleet/core';
import { SYSTEM_TOOLS, requireSystemTools } from '@fleet/testkit';
import { repackedArtifact } from '../src/artifact.js';
import { tempDir } from '../src/fleet.js';
import {
  carriedCommit,
  expectationFor,
  sha256,
  startRuntimeNode,
  upgradeThroughController,
  waitForEnd,
  type RuntimeNode,
} from '../src/runtime-node.js';

/** A release key made by the real ssh-keygen: its private key file and public key line. */
function keygen(dir: string, name: string): { file: string; line: string } {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@seat`, '-f', file]);
  return { file, line: execFileSync('cat', [`${file}.pub`], { encoding: 'utf8' }).trim() };
}

/** `ssh-keygen -Y sign -f KEY -n fleet-release FILE`: the one-line body of the `.sig` it wrote. */
async function sign(key: string, file: string): Promise<string> {
  execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', 'fleet-release', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return signatureBody(await readFile(`${file}.sig`, 'utf8'));
}

/** `tgz` unpacked, `edit`ed, packed again with tar: the repacked artifact's bytes. */
async function repack(
  tgz: string,
  dir: string,
  edit: (root: string) => Promise<void>,
): Promise<Buffer> {
  const work = join(dir, `edit-${Date.now()}`);
  await mkdir(work, { recursive: true });
  execFileSync('tar', ['-xzf', tgz, '-C', work]);
  await edit(work);
  const out = `${work}.tgz`;
  execFileSync('tar', ['-czf', out, '-C', work, 'package']);
  return readFile(out);
}

describe('release signatures on a real node: signed accepted, tampered refused (issue 36)', function () {
  this.timeout(600_000);
  let node: RuntimeNode;
  let scratch: { path: string; cleanup: () => Promise<void> };
  let release: { file: string; line: string };
  let stranger: { file: string; line: string };
  let second: Awaited<ReturnType<typeof repackedArtifact>>;
  let signature: string;

  before(async function () {
    requireSystemTools(this, [SYSTEM_TOOLS.sshKeygen], 'release signatures are made by ssh-keygen');
    scratch = await tempDir('fleet-runtime-signature-');
    release = keygen(scratch.path, 'release');
    stranger = keygen(scratch.path, 'stranger');
    node = await startRuntimeNode(this, { runtime: { trustedKeys: [release.line] } });
    second = await repackedArtifact(
      node.artifact,
      `${node.artifact.version}-signed.2`,
      scratch.path,
    );
    signature = await sign(release.file, second.path);
  });
  after(async () => {
    await node?.dispose();
    await scratch?.cleanup();
  });

  const generations = () => readdir(runtimeLayout(node.home, 'linux').generations);
  const journal = () =>
    readFile(join(node.home, '.local/state/fleet/journal/runtime.jsonl'), 'utf8').catch(() => '');
  const auditRecords = async () =>
    (await readFile(join(node.home, '.local/state/fleet/audit.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  function request(bytes: Buffer, sig: string | undefined): RuntimeStageRequest {
    return {
      operationId: newOperationId(),
      kind: 'upgrade',
      supervisor: 'systemd-user',
      planId: null,
      // The target a caller would name for these bytes (read from the good build: a tampered
      // tarball need not even unpack — the signature is checked before anything reads it).
      target: expectationFor(second.bytes, second.pkg, {
        build: { sha256: sha256(bytes), commit: carriedCommit(second.bytes) },
      }),
      artifact: {
        sha256: sha256(bytes),
        bytes: bytes.length,
        content: bytes.toString('base64'),
        ...(sig === undefined ? {} : { signature: sig }),
      },
    };
  }

  /** Stages `bytes` with `sig`: refused with `code`, nothing staged or journaled, and audited. */
  async function expectRefused(bytes: Buffer, sig: string | undefined, code: string) {
    const held = await generations();
    const journaled = await journal();
    const body = request(bytes, sig);
    let refused: { code?: string; message?: string; exitCode?: number } | undefined;
    try {
      await node.client.runtimeStage(body);
    } catch (error) {
      refused = error as typeof refused;
    }
    expect(refused?.code, refused?.message).to.equal(code);
    expect(refused?.exitCode).to.equal(7);
    expect(await generations()).to.deep.equal(held);
    expect(await journal()).to.equal(journaled);
    const record = (await auditRecords()).find((r) => r['operationId'] === body.operationId);
    expect(record, 'the refusal is in the audit log').to.deep.include({
      operation: 'runtime-stage',
      outcome: 'failed',
      code,
    });
    return refused?.message ?? '';
  }

  it('the build with a byte changed, with the original signature: SIGNATURE_INVALID, nothing staged', async () => {
    const changed = Buffer.from(second.bytes);
    const at = changed.length - 100;
    changed[at] = (changed[at] ?? 0) ^ 0x01;
    const message = await expectRefused(changed, signature, 'SIGNATURE_INVALID');
    expect(message).to.contain(parseSshEd25519PublicKey(release.line).fingerprint);
    expect(message).to.contain('does not verify');
  });

  it('the build repacked with one line added, with the original signature: SIGNATURE_INVALID', async () => {
    const added = await repack(second.path, scratch.path, async (root) => {
      await appendFile(join(root, 'package', 'bin', 'run.js'), '\n// one line more\n');
    });
    expect(sha256(added)).to.not.equal(sha256(second.bytes));
    await expectRefused(added, signature, 'SIGNATURE_INVALID');
  });

  it('the build repacked with a file added, with the original signature: SIGNATURE_INVALID', async () => {
    const added = await repack(second.path, scratch.path, async (root) => {
      await writeFile(join(root, 'package', 'postinstall.js'), 'process.exit(0);\n');
    });
    await expectRefused(added, signature, 'SIGNATURE_INVALID');
  });

  it('the build with a carried plugin swapped in, its pin made to agree: SIGNATURE_INVALID', async () => {
    // What an attacker with a runtime:upgrade token would ship: a plugin's tarball, its unpacked
    // tree and the build record's pin all consistent with each other — only the signature, which
    // covers the whole artifact, tells the node it is not what the operator released.
    const swapped = await repack(second.path, scratch.path, async (root) => {
      const pkg = join(root, 'package');
      const plugin = join(scratch.path, `plugin-${Date.now()}`, 'package');
      await mkdir(plugin, { recursive: true });
      const manifest = { name: 'fleet-plugin-swapped', version: '1.0.0', type: 'module' };
      await writeFile(join(plugin, 'package.json'), `${JSON.stringify(manifest)}\n`);
      await writeFile(join(plugin, 'index.js'), 'export default {};\n');
      const tarball = `${plugin}.tgz`;
      execFileSync('tar', ['-czf', tarball, '-C', join(plugin, '..'), 'package']);
      const pluginSha = sha256(await readFile(tarball));
      const carried = join(pkg, 'fleet-plugins');
      await mkdir(join(carried, 'tarballs'), { recursive: true });
      await writeFile(join(carried, 'tarballs', `${pluginSha}.tgz`), await readFile(tarball));
      await cp(plugin, join(carried, 'packages', manifest.name), { recursive: true });
      const recordPath = join(pkg, 'fleet-build.json');
      const record = JSON.parse(await readFile(recordPath, 'utf8')) as { plugins?: unknown[] };
      record.plugins = [
        ...(record.plugins ?? []),
        { name: manifest.name, version: manifest.version, sha256: pluginSha },
      ];
      await writeFile(recordPath, `${JSON.stringify(record)}\n`);
    });
    await expectRefused(swapped, signature, 'SIGNATURE_INVALID');
  });

  it('the build signed by a key the node does not trust: SIGNATURE_INVALID naming that key', async () => {
    const copy = join(scratch.path, 'stranger.tgz');
    await writeFile(copy, second.bytes);
    const message = await expectRefused(
      second.bytes,
      await sign(stranger.file, copy),
      'SIGNATURE_INVALID',
    );
    expect(message).to.contain(parseSshEd25519PublicKey(stranger.line).fingerprint);
    expect(message).to.contain('does not trust');
  });

  it('the build without a signature: ARTIFACT_UNSIGNED', async () => {
    await expectRefused(second.bytes, undefined, 'ARTIFACT_UNSIGNED');
  });

  it('the build signed by the trusted key: staged, accepted, the signer in the audit log', async () => {
    const before = await node.client.identity();
    const txn = await upgradeThroughController(
      node,
      second.bytes,
      expectationFor(second.bytes, second.pkg),
      { signature, acceptanceTimeoutMs: 60_000 },
    );
    const status = await waitForEnd(node, txn);
    expect(status.state, JSON.stringify(status)).to.equal('accepted');
    const after = await node.client.identity();
    expect(after.build.sha256).to.equal(sha256(second.bytes));
    expect(after.pid).to.not.equal(before.pid);
    const fingerprint = parseSshEd25519PublicKey(release.line).fingerprint;
    const staged = (await auditRecords()).filter(
      (r) => r['operation'] === 'runtime-stage' && r['outcome'] === 'ok',
    );
    expect(staged.at(-1)?.['detail']).to.match(
      new RegExp(
        `: artifact uploaded; signed by ${fingerprint.replace(/[+/]/g, '\\$&')}; answered 200$`,
      ),
    );
  });
});
