/**
 * The SSH recovery path's bundle (bootstrap/bundle.ts, contract §12): what `encodeBundle` writes
 * `readBundle` reads back, however the stream is cut into chunks; anything else — a short or long
 * stream, a bad digest, an oversized header, a held generation with bytes — is
 * `GENERATION_INVALID`. And the acceptance timeout the receiver takes from a bundle.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import * as core from '@fleet/core';
import { BUNDLE_SCHEMA, encodeBundle, readBundle } from '../src/bootstrap/bundle.js';
import { acceptanceTimeoutOf } from '../src/bootstrap/runtime-handlers.js';

const PLAN = { plan: { id: 'p1' }, acceptanceTimeoutMs: 60_000 };
const ARTIFACT = Buffer.from('the runtime artifact, for the test '.repeat(40));

/** The bytes as a stream of chunks of `size` bytes. */
function chunked(bytes: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) {
    chunks.push(bytes.subarray(offset, offset + size));
  }
  return Readable.from(chunks);
}

async function refusal(bytes: Buffer, limits?: Parameters<typeof readBundle>[1]): Promise<string> {
  try {
    await readBundle(chunked(bytes, 7), limits);
  } catch (error) {
    expect(error).to.be.instanceOf(core.FleetError);
    expect((error as core.FleetError).code).to.equal('GENERATION_INVALID');
    return (error as Error).message;
  }
  throw new Error('the bundle was read');
}

const header = (artifact: object) =>
  Buffer.from(`${JSON.stringify({ schema: BUNDLE_SCHEMA, plan: PLAN, artifact })}\n`);

describe('bootstrap: the recovery bundle', () => {
  for (const size of [1, 5, 64, 100_000]) {
    it(`reads back what was encoded, in chunks of ${size} bytes`, async () => {
      const bundle = await readBundle(chunked(await encodeBundle(PLAN, ARTIFACT), size));
      expect(bundle.plan).to.deep.equal(PLAN);
      expect(bundle.artifact).to.deep.equal({
        sha256: createHash('sha256').update(ARTIFACT).digest('hex'),
        bytes: ARTIFACT.length,
      });
      expect(bundle.data?.equals(ARTIFACT)).to.equal(true);
    });
  }

  it('a held generation: no bytes, no data', async () => {
    const sha256 = 'a'.repeat(64);
    const bundle = await readBundle(chunked(await encodeBundle(PLAN, { held: sha256 }), 3));
    expect(bundle.artifact).to.deep.equal({ sha256, bytes: 0, held: true });
    expect(bundle.data).to.equal(null);
  });

  const sha256 = createHash('sha256').update(ARTIFACT).digest('hex');
  const cases: { name: string; bytes: (encoded: Buffer) => Buffer; says: RegExp }[] = [
    { name: 'an empty stream', bytes: () => Buffer.alloc(0), says: /the stream is empty/ },
    {
      name: 'a stream ending inside the header',
      bytes: () => Buffer.from('{"schema":'),
      says: /ended inside the header line/,
    },
    {
      name: 'a short stream',
      bytes: (encoded) => encoded.subarray(0, -1),
      says: new RegExp(`ended after ${ARTIFACT.length - 1} of the ${ARTIFACT.length}`),
    },
    {
      name: 'a long stream',
      bytes: (encoded) => Buffer.concat([encoded, Buffer.from('x')]),
      says: /longer than the \d+ artifact bytes/,
    },
    {
      name: 'bytes that are not the announced ones',
      bytes: () =>
        Buffer.concat([header({ sha256: 'b'.repeat(64), bytes: ARTIFACT.length }), ARTIFACT]),
      says: new RegExp(`sha256 is ${sha256}, not the ${'b'.repeat(64)}`),
    },
    {
      name: 'a header that is not UTF-8',
      bytes: () => Buffer.from([0xff, 0xfe, 0x0a]),
      says: /not UTF-8/,
    },
    {
      name: 'a held generation announcing bytes',
      bytes: () => header({ sha256, bytes: 3, held: true }),
      says: /a held generation comes with no bytes/,
    },
    {
      name: 'an unknown envelope field',
      bytes: () => header({ sha256, bytes: 0, extra: 1 }),
      says: /bad header/,
    },
  ];
  for (const { name, bytes, says } of cases) {
    it(`refuses ${name}`, async () => {
      expect(await refusal(bytes(await encodeBundle(PLAN, ARTIFACT)))).to.match(says);
    });
  }

  it('refuses a header longer than allowed before its newline arrives', async () => {
    const limits = { maxHeaderBytes: 16, maxArtifactBytes: 1024 };
    expect(await refusal(Buffer.from('x'.repeat(40)), limits)).to.match(
      /header line is longer than 16 bytes/,
    );
  });

  const { min, max, default: fallback } = core.ACCEPTANCE_TIMEOUT_MS;
  for (const [timeout, expected] of [
    [min, min],
    [max, max],
    [min - 1, fallback],
    [max + 1, fallback],
    [min + 0.5, fallback],
    ['60000', fallback],
    [undefined, fallback],
  ] as const) {
    it(`the acceptance timeout ${JSON.stringify(timeout)} is ${expected}`, () => {
      expect(acceptanceTimeoutOf(timeout)).to.equal(expected);
    });
  }
});
