/**
 * Unauthenticated load cannot starve authenticated clients (contract §15; catalogue 10): with the
 * default budgets, 260 slowloris connections from one address — more than the old shared cap of
 * 256 — while a real client, from another loopback address and from the same one, keeps being
 * served; and a flood of them stays within the unauthenticated budget.
 */
import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import { startNode, type TestNode } from './support/node.js';

/** One complete request on a fresh connection from `localAddress`; resolves with the status. */
function request(url: string, token: string, localAddress: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('connect', () =>
      socket.write(
        `GET /v1/identity HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      ),
    );
  });
}

/** A connection that sends part of its headers and then nothing (slowloris). */
function slow(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write(`GET /v1/identity HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

describe('connection budgets', () => {
  let node: TestNode;
  let token: string;
  const sockets: Socket[] = [];

  before(async () => {
    // Default budgets; only the header timeout is long, so the slow sockets stay for the test.
    node = await startNode({ limits: { headersTimeoutMs: 20_000, requestTimeoutMs: 20_000 } });
    token = await node.issue(['config:read']);
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await node.dispose();
  });

  it('260 slow unauthenticated connections from one address do not starve a real client', async () => {
    for (let i = 0; i < 260; i += 1) sockets.push(await slow(node.url));
    // Let the server accept every one of them before the real client comes.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 5; i += 1) {
      expect(await request(node.url, token, '127.0.0.2'), 'from another address').to.equal(200);
      expect(await request(node.url, token, '127.0.0.1'), 'from the same address').to.equal(200);
    }
    // Room was made by closing the flooding address's own oldest sockets, no more than needed.
    const closed = sockets.filter((socket) => socket.destroyed || socket.readyState !== 'open');
    expect(closed.length).to.be.greaterThan(0);
    expect(closed.length).to.be.lessThan(40);
  });
});
