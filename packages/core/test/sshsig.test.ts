/**
 * Release signatures (ADR 0019, runtime/sshsig.ts): SSHSIG signatures made by the real
 * `ssh-keygen -Y sign -n fleet-release` verify with node:crypto against a policy's trusted keys;
 * a changed byte, another namespace, an untrusted key, a truncated blob, garbage and an RSA
 * signature are refused with the reason. And the other way round: the real
 * `ssh-keygen -Y verify` accepts what it signed with an allowed_signers line built from the
 * policy's key, so the policy holds keys in the format the real tool uses.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FleetError } from '../src/errors.js';
import { parseNodePolicy } from '../src/policy/load.js';
import {
  RELEASE_SIGNATURE_NAMESPACE,
  parseSshEd25519PublicKey,
  parseSshSignature,
  signatureBody,
  verifyReleaseSignature,
} from '../src/runtime/sshsig.js';

function hasSshKeygen(): boolean {
  return spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error === undefined;
}

/** A key made by the real ssh-keygen: its private key file and its public key line. */
async function keygen(dir: string, name: string, type: 'ed25519' | 'rsa'): Promise<string> {
  const file = join(dir, name);
  execFileSync('ssh-keygen', [
    '-q',
    '-t',
    type,
    ...(type === 'rsa' ? ['-b', '2048'] : []),
    '-N',
    '',
    '-C',
    `${name}@test`,
    '-f',
    file,
  ]);
  return (await readFile(`${file}.pub`, 'utf8')).trim();
}

/** `ssh-keygen -Y sign -f KEY -n NAMESPACE FILE`: the armored signature it writes. */
async function sign(
  key: string,
  file: string,
  namespace = RELEASE_SIGNATURE_NAMESPACE,
  options: readonly string[] = [],
): Promise<string> {
  await rm(`${file}.sig`, { force: true });
  execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', namespace, ...options, file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return readFile(`${file}.sig`, 'utf8');
}

/** The signature's blob changed by `edit`, as one line of base64. */
function edited(signature: string, edit: (blob: Buffer) => Buffer): string {
  return edit(Buffer.from(signatureBody(signature), 'base64')).toString('base64');
}

describe('release signatures: SSHSIG by ssh-keygen, verified with node:crypto (ADR 0019)', function () {
  this.timeout(60_000);
  let dir: string;
  let artifact: Buffer;
  let file: string;
  let trusted: string;
  let other: string;
  let rsa: string;
  let signature: string;

  before(async function () {
    if (!hasSshKeygen()) {
      process.stderr.write(
        '      pending: release signatures: needs ssh-keygen (Debian package openssh-client)\n',
      );
      this.skip();
    }
    dir = await mkdtemp(join(tmpdir(), 'fleet-sshsig-'));
    trusted = await keygen(dir, 'release', 'ed25519');
    other = await keygen(dir, 'stranger', 'ed25519');
    rsa = await keygen(dir, 'rsa', 'rsa');
    artifact = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31 + 7) % 256));
    file = join(dir, 'fleet-cli-1.2.0.tgz');
    await writeFile(file, artifact);
    signature = await sign(join(dir, 'release'), file);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('verifies what ssh-keygen signed, armored or as its one-line body, naming key and fingerprint', () => {
    const fingerprint = execFileSync('ssh-keygen', [
      '-l',
      '-E',
      'sha256',
      '-f',
      `${join(dir, 'release')}.pub`,
    ])
      .toString()
      .split(' ')[1];
    for (const form of [signature, signatureBody(signature), `  ${signatureBody(signature)}\n`]) {
      const verdict = verifyReleaseSignature(artifact, form, [trusted]);
      expect(verdict).to.deep.equal({
        ok: true,
        key: trusted.split(' ').slice(0, 2).join(' '),
        fingerprint,
      });
    }
    // A trusted key is matched by its key, whatever its comment, among others.
    expect(
      verifyReleaseSignature(artifact, signature, [
        other,
        `${trusted.split(' ').slice(0, 2).join(' ')} another comment`,
      ]).ok,
    ).to.equal(true);
  });

  it('parses the fields ssh-keygen wrote (sha512 by default)', () => {
    const parsed = parseSshSignature(signature);
    expect(parsed.version).to.equal(1);
    expect(parsed.namespace).to.equal('fleet-release');
    expect(parsed.hashAlgorithm).to.equal('sha512');
    expect(parsed.keyType).to.equal('ssh-ed25519');
    expect(parsed.signatureAlgorithm).to.equal('ssh-ed25519');
    expect(parsed.signature).to.have.length(64);
    expect(parsed.fingerprint).to.equal(parseSshEd25519PublicKey(trusted).fingerprint);
    expect(signatureBody(signature)).to.not.match(/\s/);
  });

  it('verifies a sha256 signature (ssh-keygen -O hashalg=sha256)', async () => {
    const copy = join(dir, 'sha256.tgz');
    await writeFile(copy, artifact);
    const sha256 = await sign(join(dir, 'release'), copy, RELEASE_SIGNATURE_NAMESPACE, [
      '-O',
      'hashalg=sha256',
    ]);
    expect(parseSshSignature(sha256).hashAlgorithm).to.equal('sha256');
    expect(verifyReleaseSignature(artifact, sha256, [trusted]).ok).to.equal(true);
  });

  describe('refuses, saying why', () => {
    const cases: {
      readonly name: string;
      readonly reason: RegExp;
      readonly run: () =>
        | Promise<ReturnType<typeof verifyReleaseSignature>>
        | ReturnType<typeof verifyReleaseSignature>;
    }[] = [
      {
        name: 'a changed byte of the artifact',
        reason: /does not verify: the artifact is not the bytes key SHA256:\S+ signed/,
        run: () => {
          const changed = Buffer.from(artifact);
          changed[40_000] = (changed[40_000] ?? 0) ^ 1;
          return verifyReleaseSignature(changed, signature, [trusted]);
        },
      },
      {
        name: 'an artifact one byte longer',
        reason: /does not verify/,
        run: () =>
          verifyReleaseSignature(Buffer.concat([artifact, Buffer.of(0)]), signature, [trusted]),
      },
      {
        name: 'another namespace',
        reason: /is in namespace "file", not "fleet-release" \(made with ssh-ed25519 key SHA256:/,
        run: async () => {
          const copy = join(dir, 'other-namespace.tgz');
          await writeFile(copy, artifact);
          return verifyReleaseSignature(artifact, await sign(join(dir, 'release'), copy, 'file'), [
            trusted,
          ]);
        },
      },
      {
        name: 'a key the node does not trust, named by its fingerprint',
        reason: /was made with key SHA256:\S+, which this node does not trust/,
        run: async () => {
          const copy = join(dir, 'stranger.tgz');
          await writeFile(copy, artifact);
          const verdict = verifyReleaseSignature(
            artifact,
            await sign(join(dir, 'stranger'), copy),
            [trusted],
          );
          if (!verdict.ok) {
            expect(verdict.reason).to.contain(parseSshEd25519PublicKey(other).fingerprint);
          }
          return verdict;
        },
      },
      {
        name: 'no trusted key at all',
        reason: /which this node does not trust/,
        run: () => verifyReleaseSignature(artifact, signature, []),
      },
      {
        name: 'an RSA signature (ssh-keygen with an RSA key)',
        reason:
          /is a rsa-sha2-512 signature \(made with ssh-rsa key SHA256:\S+\): only ssh-ed25519 keys sign releases/,
        run: async () => {
          const copy = join(dir, 'rsa.tgz');
          await writeFile(copy, artifact);
          return verifyReleaseSignature(artifact, await sign(join(dir, 'rsa'), copy), [
            trusted,
            rsa,
          ]);
        },
      },
      {
        name: 'a truncated blob',
        reason: /is truncated: the signature ends inside its signature/,
        run: () =>
          verifyReleaseSignature(
            artifact,
            edited(signature, (blob) => blob.subarray(0, blob.length - 10)),
            [trusted],
          ),
      },
      {
        name: 'a blob with bytes after its end',
        reason: /has 3 bytes after the end of the signature/,
        run: () =>
          verifyReleaseSignature(
            artifact,
            edited(signature, (blob) => Buffer.concat([blob, Buffer.of(1, 2, 3)])),
            [trusted],
          ),
      },
      {
        name: 'another SSHSIG version',
        reason: /is SSHSIG version 2, not 1/,
        run: () =>
          verifyReleaseSignature(
            artifact,
            edited(signature, (blob) => {
              const copy = Buffer.from(blob);
              copy.writeUInt32BE(2, 6);
              return copy;
            }),
            [trusted],
          ),
      },
      {
        name: 'a flipped bit of the signature itself',
        reason: /does not verify/,
        run: () =>
          verifyReleaseSignature(
            artifact,
            edited(signature, (blob) => {
              const copy = Buffer.from(blob);
              copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0x80;
              return copy;
            }),
            [trusted],
          ),
      },
      {
        name: 'not the SSHSIG magic',
        reason: /does not start with "SSHSIG"/,
        run: () =>
          verifyReleaseSignature(artifact, Buffer.from('SSHSIX and more').toString('base64'), [
            trusted,
          ]),
      },
      {
        name: 'garbage',
        reason: /is neither armored nor one line of base64/,
        run: () => verifyReleaseSignature(artifact, 'not a signature at all', [trusted]),
      },
      {
        name: 'garbage that is one word',
        reason: /not base64/,
        run: () => verifyReleaseSignature(artifact, 'garbage!', [trusted]),
      },
      {
        name: 'a PGP armor',
        reason: /is not armored as an SSH signature/,
        run: () =>
          verifyReleaseSignature(
            artifact,
            '-----BEGIN PGP SIGNATURE-----\nAAAA\n-----END PGP SIGNATURE-----\n',
            [trusted],
          ),
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const verdict = await c.run();
        expect(verdict.ok, c.name).to.equal(false);
        if (verdict.ok) return;
        expect(verdict.code).to.equal('SIGNATURE_INVALID');
        expect(verdict.reason).to.match(/^the release signature /);
        expect(verdict.reason).to.match(c.reason);
      });
    }
  });

  it('the real ssh-keygen -Y verify accepts it with an allowed_signers line from the policy key', async () => {
    const { policy } = parseNodePolicy(
      `version: 1\nruntime:\n  trustedKeys: ['${trusted}']\n`,
      'node-policy.yaml',
    );
    const key = policy.runtime?.trustedKeys[0];
    expect(key).to.equal(trusted);
    const signers = join(dir, 'allowed_signers');
    await writeFile(signers, `fleet ${key}\n`);
    const sig = join(dir, 'release.sig');
    await writeFile(sig, signature);
    const verify = (message: Buffer) =>
      spawnSync(
        'ssh-keygen',
        [
          '-Y',
          'verify',
          '-f',
          signers,
          '-I',
          'fleet',
          '-n',
          RELEASE_SIGNATURE_NAMESPACE,
          '-s',
          sig,
        ],
        { input: message },
      );
    const good = verify(artifact);
    expect(good.status, good.stderr.toString()).to.equal(0);
    expect(good.stdout.toString()).to.match(
      /Good "fleet-release" signature for fleet with ED25519 key/,
    );
    // …and refuses what this module refuses: the same artifact with one byte changed.
    const changed = Buffer.from(artifact);
    changed[0] = (changed[0] ?? 0) ^ 1;
    expect(verify(changed).status).to.not.equal(0);
    expect(verifyReleaseSignature(changed, signature, [key ?? '']).ok).to.equal(false);
  });
});

describe('ssh-ed25519 public key lines (the policy runtime.trustedKeys format)', () => {
  const ed = `ssh-ed25519 ${Buffer.concat([
    Buffer.from([0, 0, 0, 11]),
    Buffer.from('ssh-ed25519'),
    Buffer.from([0, 0, 0, 32]),
    Buffer.alloc(32, 7),
  ]).toString('base64')}`;
  const cases: { readonly line: string; readonly error: RegExp | null }[] = [
    { line: ed, error: null },
    { line: `${ed} release@seat`, error: null },
    { line: `  ${ed}\tcomment with spaces  `, error: null },
    { line: '', error: /not an OpenSSH public key line/ },
    { line: 'ssh-ed25519', error: /not an OpenSSH public key line/ },
    {
      line: `ssh-rsa ${ed.split(' ')[1]}`,
      error: /the key type is "ssh-rsa", not ssh-ed25519: only ssh-ed25519 keys sign releases/,
    },
    { line: 'ssh-ed25519 not-base64!', error: /not base64/ },
    {
      line: `ssh-ed25519 ${Buffer.concat([Buffer.from([0, 0, 0, 7]), Buffer.from('ssh-rsa'), Buffer.from([0, 0, 0, 1]), Buffer.of(3)]).toString('base64')}`,
      error: /its blob says ssh-rsa/,
    },
    {
      line: `ssh-ed25519 ${Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.from([0, 0, 0, 31]), Buffer.alloc(31)]).toString('base64')}`,
      error: /32 bytes, this one 31/,
    },
    {
      line: `ssh-ed25519 ${Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.from([0, 0, 0, 32])]).toString('base64')}`,
      error: /truncated/,
    },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.line.slice(0, 40))}: ${c.error === null ? 'a key' : 'refused'}`, () => {
      if (c.error === null) {
        const key = parseSshEd25519PublicKey(c.line);
        expect(key.line).to.equal(ed);
        expect(key.key).to.have.length(32);
        expect(key.fingerprint).to.match(/^SHA256:[A-Za-z0-9+/]{43}$/);
        return;
      }
      expect(() => parseSshEd25519PublicKey(c.line))
        .to.throw(FleetError)
        .with.property('message')
        .that.matches(c.error);
    });
  }
});
