/**
 * Drift's read of a host (operator/config/live.ts): one snapshot request carrying the runtime
 * journal summary; a node that predates the `runtime` field refuses it as `BAD_REQUEST` (its
 * request schema is strict) and is asked again without it, so drift still reads its files.
 */
import { expect } from 'chai';
import { FleetError } from '@fleet/core';
import type { ControllerClient, FileTarget, SnapshotRequest, SnapshotResponse } from '@fleet/core';
import { readSnapshotThroughController } from '../src/config/live.js';

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
