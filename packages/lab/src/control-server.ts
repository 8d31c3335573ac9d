/**
 * The server half of a lab supervisor's control socket (protocol and client in core's
 * `lab-supervisor.ts`): one JSON line in, one JSON line out. The socket is created 0600 — only
 * the lab's user may restart its controllers — and a stale socket file left by a crashed
 * supervisor is replaced (lab up has already checked that no supervisor of this lab runs).
 */
import { chmod, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { FleetError, isFleetError, parseStrictJson } from '@fleet/core';
import {
  labSupervisorRequestSchema,
  type LabSupervisorRequest,
  type LabSupervisorResponse,
  type LabSupervisorState,
} from './supervisor-protocol.js';
import { MAX_SOCKET_PATH } from './layout.js';

const MAX_REQUEST_BYTES = 16 * 1024;

export type ControlHandler = (request: LabSupervisorRequest) => Promise<LabSupervisorState>;

async function answer(line: string, handler: ControlHandler): Promise<LabSupervisorResponse> {
  try {
    const parsed = labSupervisorRequestSchema.safeParse(
      parseStrictJson(line, 'request', 'BAD_REQUEST'),
    );
    if (!parsed.success) {
      return {
        ok: false,
        error: {
          code: 'BAD_REQUEST',
          message: 'expected {"restart":{"nodeId"?}}, {"stop":{}} or {"status":{}}',
        },
      };
    }
    return { ok: true, state: await handler(parsed.data) };
  } catch (error) {
    if (isFleetError(error))
      return { ok: false, error: { code: error.code, message: error.message } };
    return {
      ok: false,
      error: { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) },
    };
  }
}

export async function serveControl(socketPath: string, handler: ControlHandler): Promise<Server> {
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new FleetError(
      'USAGE',
      `the lab's control socket path ${socketPath} is longer than a unix socket allows (${MAX_SOCKET_PATH} bytes): use a shorter --dir`,
    );
  }
  await unlink(socketPath).catch(() => undefined);
  const server = createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    // A restart can outlast the requester (the controller that asked is the one restarted).
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      if (buffer.includes('\n')) return;
      buffer += chunk;
      if (buffer.length > MAX_REQUEST_BYTES) {
        socket.end(
          `${JSON.stringify({ ok: false, error: { code: 'REQUEST_TOO_LARGE', message: 'request too large' } })}\n`,
        );
        return;
      }
      const end = buffer.indexOf('\n');
      if (end === -1) return;
      void answer(buffer.slice(0, end), handler).then((response) => {
        if (!socket.destroyed) socket.end(`${JSON.stringify(response)}\n`);
      });
    });
  });
  // The umask decides the mode the socket is created with: 0600 from the first instant. The
  // bind happens synchronously inside listen(), so the umask is restored before anything else
  // in this process (a virtual lab's controllers) creates a file.
  const previous = process.umask(0o077);
  let listening: Promise<void>;
  try {
    listening = new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  await listening;
  await chmod(socketPath, 0o600).catch(() => undefined);
  return server;
}

export async function closeControl(server: Server, socketPath: string): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await unlink(socketPath).catch(() => undefined);
}
