/**
 * The lab supervisor behind the `ControllerSupervisor` seam: a fake supervisor socket speaking the
 * lab's control protocol (one JSON line in, one out) stands in for `fleet lab supervise`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { LAB_SUPERVISOR_ENV } from '@fleet/core';
import { labControllerSupervisor, supervisorFromEnvironment } from '../src/supervisor.js';

describe('lab controller supervisor', () => {
  let dir: string;
  let server: Server;
  const requests: unknown[] = [];
  let refuse: string | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-ti-'));
    server = createServer((socket) => {
      socket.setEncoding('utf8');
      let buffer = '';
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        if (!buffer.includes('\n')) return;
        const request = JSON.parse(buffer.slice(0, buffer.indexOf('\n'))) as {
          restart?: { nodeId?: string };
        };
        requests.push(request);
        const nodeId = request.restart?.nodeId ?? 'node-01';
        const answer =
          refuse === nodeId
            ? {
                ok: false,
                error: {
                  code: 'ACTION_FAILED',
                  message: 'the controller exited (code 1) before accepting requests',
                },
              }
            : {
                ok: true,
                state: {
                  host: 'node-01',
                  flags: { nodeId, port: 7701 },
                  pid: 4242,
                  startedAt: new Date().toISOString(),
                  supervisorPid: process.pid,
                  state: 'running',
                  restarts: requests.length,
                  home: dir,
                  virtual: false,
                },
              };
        socket.end(`${JSON.stringify(answer)}\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(join(dir, 'supervisor.sock'), resolve));
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('records the flag, then restarts with it in one lab request', async () => {
    const supervisor = labControllerSupervisor(join(dir, 'supervisor.sock'));
    expect(supervisor).to.include({ kind: 'lab', replacesCaller: true });
    await supervisor.recordNodeId('node-02');
    expect(requests).to.deep.equal([]);
    expect(await supervisor.restart()).to.include({ nodeId: 'node-02', pid: 4242 });
    expect(requests).to.deep.equal([{ restart: { nodeId: 'node-02' } }]);
  });

  it('rejects when the supervisor could not start the controller', async () => {
    refuse = 'node-03';
    const supervisor = labControllerSupervisor(join(dir, 'supervisor.sock'));
    await supervisor.recordNodeId('node-03');
    try {
      await supervisor.restart();
      expect.fail('expected a rejection');
    } catch (error) {
      expect((error as Error).message).to.contain('before accepting requests');
    }
  });

  it('is found from FLEET_LAB_SUPERVISOR, and absent without it', () => {
    expect(supervisorFromEnvironment({})).to.equal(undefined);
    expect(
      supervisorFromEnvironment({ [LAB_SUPERVISOR_ENV]: '/x/supervisor.sock' })?.locator,
    ).to.deep.equal({
      kind: 'lab',
      socket: '/x/supervisor.sock',
    });
  });
});
