/**
 * The bundle the `apply` verb of the SSH recovery path carries on stdin (contract §12):
 *
 * ```
 * {"schema":"fleet.bootstrap-bundle/v1","plan":{…},"artifact":{"sha256":"<64 hex>","bytes":N}}\n
 * <exactly N raw artifact bytes><EOF>
 * ```
 *
 * One JSON header line (at most 64 KiB, strict JSON: no duplicate or prototype keys, no unknown
 * envelope field), a newline, then the runtime artifact, whose sha256 must equal the header's —
 * or, for a generation the node already holds (its recovery status lists it), no bytes at all:
 * `"artifact":{"sha256":"…","bytes":0,"held":true}`, and the node stages from the generation it
 * holds, verified again (`GENERATION_NOT_HELD` when it does not). A receiver that predates
 * `held` refuses the field, and the operator sends the artifact.
 * Anything else (a short or long stream, a bad digest, an oversized header) is
 * `GENERATION_INVALID`: nothing of it is used. The bundle carries no credentials and no policy;
 * `plan` is opaque here and validated by the apply handler.
 */
import { createHash } from 'node:crypto';
import type { FleetError as FleetErrorClass } from '@fleet/core';
import * as core from '@fleet/core';
import * as z from '@fleet/core/zod';

export const BUNDLE_SCHEMA = 'fleet.bootstrap-bundle/v1';

export interface BundleLimits {
  /** Longest header line, newline excluded. */
  readonly maxHeaderBytes: number;
  /** Largest artifact the header may announce. */
  readonly maxArtifactBytes: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  maxHeaderBytes: 64 * 1024,
  maxArtifactBytes: 256 * 1024 * 1024,
};

export interface BundleArtifact {
  /** sha256 of the bytes, 64 lower-case hex digits (verified). */
  readonly sha256: string;
  readonly bytes: number;
  /** No bytes follow: the node stages the generation it holds with this sha256. */
  readonly held?: true;
}

export interface Bundle {
  /** The plan, unvalidated: the apply handler checks it. */
  readonly plan: unknown;
  readonly artifact: BundleArtifact;
  /** The artifact bytes; their sha256 equals `artifact.sha256`. `null` for a held generation. */
  readonly data: Buffer | null;
}

function invalid(message: string): FleetErrorClass {
  return new core.FleetError('GENERATION_INVALID', `bootstrap bundle refused: ${message}`);
}

/** The bundle for `plan` and the artifact's bytes (the operator side of `apply --recover`). */
// eslint-disable-next-line @typescript-eslint/require-await -- kept async: callers, and the e2e suite, take a refusal as a rejection
export async function encodeBundle(
  plan: unknown,
  artifact: Uint8Array | { readonly held: string },
  limits: BundleLimits = DEFAULT_BUNDLE_LIMITS,
): Promise<Buffer> {
  if (plan === undefined) throw invalid('the plan is missing');
  if (!(artifact instanceof Uint8Array)) {
    const header = Buffer.from(
      JSON.stringify({
        schema: BUNDLE_SCHEMA,
        plan,
        artifact: { sha256: artifact.held, bytes: 0, held: true },
      }),
      'utf8',
    );
    if (header.length > limits.maxHeaderBytes) {
      throw invalid(`the header (the plan) is ${header.length} bytes, more than allowed`);
    }
    return Buffer.concat([header, Buffer.from('\n')]);
  }
  const artifactBytes = artifact;
  if (artifactBytes.byteLength > limits.maxArtifactBytes) {
    throw invalid(
      `the artifact is ${artifactBytes.byteLength} bytes, more than the ${limits.maxArtifactBytes} allowed`,
    );
  }
  const header = Buffer.from(
    JSON.stringify({
      schema: BUNDLE_SCHEMA,
      plan,
      artifact: {
        sha256: createHash('sha256').update(artifactBytes).digest('hex'),
        bytes: artifactBytes.byteLength,
      },
    }),
    'utf8',
  );
  if (header.length > limits.maxHeaderBytes) {
    throw invalid(
      `the header (the plan) is ${header.length} bytes, more than the ${limits.maxHeaderBytes} allowed`,
    );
  }
  return Buffer.concat([header, Buffer.from('\n'), artifactBytes]);
}

/**
 * Reads one bundle from `stream` to its end and verifies it. Reading stops at the first problem
 * (the rest of the stream is not consumed). Nothing is reserved at the size the header declares:
 * the artifact is hashed and kept chunk by chunk as it arrives, so memory follows the bytes
 * actually sent (at most the declared size, itself at most `maxArtifactBytes`) — a header that
 * announces 256 MiB and sends ten bytes costs ten bytes.
 */
export async function readBundle(
  stream: AsyncIterable<unknown>,
  limits: BundleLimits = DEFAULT_BUNDLE_LIMITS,
): Promise<Bundle> {
  const reader = new BundleReader(envelopeSchema(z, limits), limits);
  for await (const item of stream) {
    if (!(item instanceof Uint8Array)) {
      throw new TypeError('readBundle: the stream must yield bytes (no encoding set)');
    }
    reader.take(Buffer.from(item.buffer, item.byteOffset, item.byteLength));
  }
  return reader.finish();
}

/** The header line's schema: strict, the artifact's size within `limits`. */
function envelopeSchema(z: typeof import('@fleet/core/zod'), limits: BundleLimits) {
  return z
    .strictObject({
      schema: z.literal(BUNDLE_SCHEMA, { message: `must be ${BUNDLE_SCHEMA}` }),
      plan: z.unknown().refine((plan) => plan !== undefined, 'is required'),
      artifact: z.strictObject({
        sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
        bytes: z.number().int().min(0).max(limits.maxArtifactBytes),
        held: z.literal(true).optional(),
      }),
    })
    .refine((envelope) => envelope.artifact.held !== true || envelope.artifact.bytes === 0, {
      message: 'a held generation comes with no bytes (artifact.bytes: 0)',
      path: ['artifact', 'bytes'],
    });
}

type EnvelopeSchema = ReturnType<typeof envelopeSchema>;

interface Envelope {
  readonly plan: unknown;
  readonly artifact: BundleArtifact;
}

/** The header line, without its newline, as an envelope; `GENERATION_INVALID` when it is not one. */
function parseHeader(schema: EnvelopeSchema, line: Buffer): Envelope {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(line);
  } catch {
    throw invalid('the header is not UTF-8');
  }
  const value = core.parseStrictJson(text, 'the bundle header', 'GENERATION_INVALID');
  const result = schema.safeParse(value);
  if (!result.success) {
    const problems = core.zodProblems(result.error, undefined);
    throw new core.FleetError(
      'GENERATION_INVALID',
      `bootstrap bundle refused: bad header: ${problems.map(core.formatProblem).join('; ')}`,
      { problems },
    );
  }
  return result.data;
}

/**
 * A bundle as its chunks arrive: the header line collected up to its newline and parsed, then the
 * artifact's bytes kept and hashed, each step refusing as soon as the stream breaks a bound.
 */
class BundleReader {
  private readonly headerChunks: Buffer[] = [];
  private headerBytes = 0;
  private envelope: Envelope | undefined;
  private readonly dataChunks: Buffer[] = [];
  private filled = 0;
  private readonly hash = createHash('sha256');

  constructor(
    private readonly schema: EnvelopeSchema,
    private readonly limits: BundleLimits,
  ) {}

  /** Takes the stream's next chunk. */
  take(chunk: Buffer): void {
    let data = chunk;
    if (!this.envelope) {
      const newline = chunk.indexOf(0x0a);
      const headerPart = newline === -1 ? chunk : chunk.subarray(0, newline);
      this.headerBytes += headerPart.length;
      if (this.headerBytes > this.limits.maxHeaderBytes) {
        throw invalid(`the header line is longer than ${this.limits.maxHeaderBytes} bytes`);
      }
      this.headerChunks.push(headerPart);
      if (newline === -1) return;
      this.envelope = parseHeader(this.schema, Buffer.concat(this.headerChunks));
      data = chunk.subarray(newline + 1);
    }
    if (data.length > 0) this.takeData(this.envelope, data);
  }

  private takeData(envelope: Envelope, chunk: Buffer): void {
    if (this.filled + chunk.length > envelope.artifact.bytes) {
      throw invalid(
        `the stream is longer than the ${envelope.artifact.bytes} artifact bytes its header announces`,
      );
    }
    // A copy: the stream may reuse the memory of the chunk it yielded.
    this.dataChunks.push(Buffer.from(chunk));
    this.filled += chunk.length;
    this.hash.update(chunk);
  }

  /** The bundle once the stream has ended: every announced byte there, their sha256 the header's. */
  finish(): Bundle {
    const { envelope, filled } = this;
    if (!envelope) {
      throw invalid(
        this.headerBytes === 0 ? 'the stream is empty' : 'the stream ended inside the header line',
      );
    }
    if (filled < envelope.artifact.bytes) {
      throw invalid(
        `the stream ended after ${filled} of the ${envelope.artifact.bytes} artifact bytes its header announces`,
      );
    }
    if (envelope.artifact.held === true) {
      return { plan: envelope.plan, artifact: envelope.artifact, data: null };
    }
    const digest = this.hash.digest('hex');
    if (digest !== envelope.artifact.sha256) {
      throw invalid(
        `the artifact's sha256 is ${digest}, not the ${envelope.artifact.sha256} its header announces`,
      );
    }
    return {
      plan: envelope.plan,
      artifact: envelope.artifact,
      data: Buffer.concat(this.dataChunks, filled),
    };
  }
}
