/**
 * Drift's read of a host (operator/config/live.ts): one snapshot request carrying the runtime
 * journal summary; a node that predates the `runtime` field refuses it as `BAD_REQUEST` (its
 * request schema is strict) and is asked again without it, so drift still reads its files. A node
 * that predates a byte-exact source's `bytes` is asked again without it: that entry alone is
 * answered `NODE_OUTDATED`, the host's other entries are read (issue 38). Each retry follows the
 * node's refusal naming the key; any other refusal stands.
 */
import { expect } from 'chai';
import { FleetError } from '@fleet/core';
import type {
  ControllerClient,
  ErrorCode,
  FileTarget,
  SnapshotRequest,
  SnapshotResponse,
} from '@fleet/core';
import type { FleetContext } from '../src/config/context.js';
import { readLiveThroughController, readSnapshotThroughController } from '../src/config/live.js';
import { olderNodeRequest, unrecognizedKeysOf } from '../src/config/older-node.js';

const ANSWER: SnapshotResponse = {
  nodeId: 'alpha',
  files: [{ path: '~/.app.conf', state: 'absent', backups: [], writes: [] }],
  truncated: false,
};
const TARGET: FileTarget = {
  domain: 'demo',
  file: {
    id: 'app.conf',
    path: '~/.app.conf',
    canonical: 'app.conf',
    kind: 'whole',
    format: 'text',
  },
  path: '~/.app.conf',
  canonical: 'domains/demo/app.conf',
  desired: { ok: true, content: 'x\n' },
};

function contextAnswering(answer: (request: SnapshotRequest) => SnapshotResponse) {
  const requests: SnapshotRequest[] = [];
  const client = {
    // eslint-disable-next-line @typescript-eslint/require-await -- the client's method is async
    snapshot: async (request: SnapshotRequest) => {
      requests.push(request);
      return answer(request);
    },
  } as unknown as ControllerClient;
  return { requests, context: { client: () => client } };
}

describe('reading a host for drift', () => {
  it('asks for the runtime summary in the same request and returns it', async () => {
    const runtime = {
      journal: 'empty',
      busy: false,
      attention: 'none',
      transaction: null,
    } as const;
    const { requests, context } = contextAnswering(() => ({ ...ANSWER, runtime }));
    const read = await readSnapshotThroughController(context)('alpha', [TARGET], [], {
      runtime: true,
    });
    expect(requests).to.have.length(1);
    expect(requests[0]).to.include({ runtime: true });
    expect(read.runtime).to.deep.equal(runtime);
  });

  it('asks an older node again without the field; the summary is then absent', async () => {
    const { requests, context } = contextAnswering((request) => {
      if (request.runtime !== undefined) {
        throw new FleetError(
          'BAD_REQUEST',
          'the request body does not match the schema: (body): Unrecognized key: "runtime"',
        );
      }
      return ANSWER;
    });
    const read = await readSnapshotThroughController(context)('alpha', [TARGET], [], {
      runtime: true,
    });
    expect(requests.map((r) => 'runtime' in r)).to.deep.equal([true, false]);
    expect(read).to.not.have.property('runtime');
    expect(read.files.size).to.equal(1);
  });

  it('passes on any other refusal', async () => {
    const { requests, context } = contextAnswering(() => {
      throw new FleetError('AUTH_INVALID', 'no such token');
    });
    let caught: unknown;
    try {
      await readSnapshotThroughController(context)('alpha', [TARGET], [], {
        runtime: true,
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(FleetError);
    expect(requests).to.have.length(1);
  });
});

const BYTES_TARGET: FileTarget = {
  domain: 'demo',
  file: {
    id: 'logo.bin',
    path: '~/.logo.bin',
    canonical: 'logo.bin',
    kind: 'whole',
    format: 'text',
  },
  path: '~/.logo.bin',
  canonical: 'domains/demo/logo.bin',
  desired: {
    ok: true,
    content: Buffer.from([0x63, 0x61, 0x66, 0xe9]).toString('base64'),
    encoding: 'base64',
  },
};

/** What a node that predates `bytes` answers: its strict file schema names the key (a table below). */
const refusingBytes = (request: SnapshotRequest) => {
  const index = request.files.findIndex((file) => file.bytes !== undefined);
  if (index >= 0) {
    throw new FleetError(
      'BAD_REQUEST',
      `alpha: the request body does not match the schema: files.${index}: Unrecognized key: "bytes"`,
    );
  }
  return {
    ...ANSWER,
    files: request.files.map((file) => ({
      path: file.path,
      state: 'absent' as const,
      backups: [],
      writes: [],
    })),
  };
};

describe('reading a host whose node predates byte-exact sources', () => {
  it('a current node answers the byte entry in the one request', async () => {
    const { requests, context } = contextAnswering((request) => ({
      ...ANSWER,
      files: request.files.map((file) => ({
        path: file.path,
        state: 'absent',
        backups: [],
        writes: [],
      })),
    }));
    const read = await readSnapshotThroughController(context)('alpha', [TARGET, BYTES_TARGET], [], {
      runtime: true,
    });
    expect(requests).to.have.length(1);
    expect(requests[0]?.files.map((f) => f.bytes)).to.deep.equal([undefined, true]);
    expect(read.files.get('~/.logo.bin')).to.deep.equal({ kind: 'absent', writes: [] });
  });

  it('an older node: the byte entry says it cannot be checked and why, the others are read', async () => {
    const { requests, context } = contextAnswering(refusingBytes);
    const read = await readSnapshotThroughController(context)(
      'alpha',
      [TARGET, BYTES_TARGET],
      [],
      {},
    );
    expect(requests.map((r) => r.files.map((f) => f.bytes))).to.deep.equal([
      [undefined, true],
      [undefined, undefined],
    ]);
    expect(read.files.get('~/.app.conf')).to.deep.equal({ kind: 'absent', writes: [] });
    const outdated = read.files.get('~/.logo.bin');
    expect(outdated).to.include({ kind: 'refused', code: 'NODE_OUTDATED' });
    expect(outdated).to.have.property('message').that.contains('predates byte-exact sources');
  });

  it("plan and install's read (no probers) degrades the same way", async () => {
    const { requests, context } = contextAnswering(refusingBytes);
    const live = await readLiveThroughController(context as unknown as FleetContext)('alpha', [
      TARGET,
      BYTES_TARGET,
    ]);
    expect(requests).to.have.length(2);
    expect(live.get('~/.logo.bin')).to.include({ kind: 'refused', code: 'NODE_OUTDATED' });
    expect(live.get('~/.app.conf')).to.deep.equal({ kind: 'absent', writes: [] });
  });

  it('a node that predates both fields is asked without each, one at a time, as it names them', async () => {
    const { requests, context } = contextAnswering((request) => {
      if (request.runtime !== undefined) {
        throw new FleetError(
          'BAD_REQUEST',
          'alpha: the request body does not match the schema: (body): Unrecognized key: "runtime"',
        );
      }
      return refusingBytes(request);
    });
    const read = await readSnapshotThroughController(context)('alpha', [TARGET, BYTES_TARGET], [], {
      runtime: true,
    });
    expect(requests.map((r) => [r.runtime, r.files[1]?.bytes])).to.deep.equal([
      [true, true],
      [undefined, true],
      [undefined, undefined],
    ]);
    expect(read).to.not.have.property('runtime');
    expect(read.files.get('~/.logo.bin')).to.include({ code: 'NODE_OUTDATED' });
  });
});

describe("what an older node's refusal shows it lacks (a table)", () => {
  const request: SnapshotRequest = {
    files: [
      { domain: 'demo', path: '~/.app.conf' },
      { domain: 'demo', path: '~/.logo.bin', bytes: true },
    ],
    backups: false,
    runtime: true,
  };
  const schema = 'alpha: the request body does not match the schema: ';
  const cases: [what: string, code: ErrorCode, message: string, left: string | null][] = [
    [
      'bytes on the entry that asked',
      'BAD_REQUEST',
      `${schema}files.1: Unrecognized key: "bytes"`,
      'bytes',
    ],
    [
      'runtime on the body',
      'BAD_REQUEST',
      `${schema}(body): Unrecognized key: "runtime"`,
      'runtime',
    ],
    [
      'both, in one refusal',
      'BAD_REQUEST',
      `${schema}files.1: Unrecognized key: "bytes"; (body): Unrecognized key: "runtime"`,
      'bytes runtime',
    ],
    [
      'bytes on an entry that did not ask',
      'BAD_REQUEST',
      `${schema}files.0: Unrecognized key: "bytes"`,
      null,
    ],
    [
      'another key too',
      'BAD_REQUEST',
      `${schema}files.1: Unrecognized keys: "bytes", "mode"`,
      null,
    ],
    [
      'bytes and a bad value',
      'BAD_REQUEST',
      `${schema}files.1: Unrecognized key: "bytes"; files.0.path: Invalid input`,
      null,
    ],
    [
      'a value the node refuses',
      'BAD_REQUEST',
      `${schema}files.1.bytes: Invalid input: expected true`,
      null,
    ],
    ['the key named outside a schema refusal', 'BAD_REQUEST', 'Unrecognized key: "bytes"', null],
    ['another code', 'POLICY_REFUSED', `${schema}files.1: Unrecognized key: "bytes"`, null],
  ];
  for (const [what, code, message, left] of cases) {
    it(`${what}: ${left === null ? 'the refusal stands' : `asked again without ${left}`}`, () => {
      const older = olderNodeRequest(request, new FleetError(code, message));
      if (left === null) {
        expect(older).to.equal(null);
        return;
      }
      const without = [older?.withoutBytes ? 'bytes' : '', older?.withoutRuntime ? 'runtime' : '']
        .filter(Boolean)
        .join(' ');
      expect(without).to.equal(left);
      expect(older?.request.files.some((f) => f.bytes !== undefined)).to.equal(
        !older?.withoutBytes,
      );
      expect(older?.request.runtime).to.equal(older?.withoutRuntime ? undefined : true);
      expect(older?.request.files.map((f) => f.path)).to.deep.equal(['~/.app.conf', '~/.logo.bin']);
    });
  }

  it('reads the keys of an unrecognized-key refusal, and nothing of any other', () => {
    expect(
      unrecognizedKeysOf(
        new FleetError('BAD_REQUEST', `${schema}files.3: Unrecognized keys: "bytes", "x"`),
      ),
    ).to.deep.equal([
      { where: 'files.3', key: 'bytes' },
      { where: 'files.3', key: 'x' },
    ]);
    expect(unrecognizedKeysOf(new Error(`${schema}files.3: Unrecognized key: "bytes"`))).to.equal(
      null,
    );
  });
});
