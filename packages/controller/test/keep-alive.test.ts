/**
 * One keep-alive connection per host (contract §14, "means"): the operator's client (core
 * `createControllerClient`) sends a verb's requests to a real controller over one connection —
 * counted on the controller's own accepted connections (Node's `net.server.socket` diagnostics
 * channel, published for every connection a server accepts) — with the pinned TLS fingerprint
 * checked on every new socket, and `close()` ending it.
 */
import { execFileSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { certificateFingerprint, createControllerClient, type ControllerClient } from '@fleet/core';
import { SYSTEM_TOOLS, requireSystemTools } from '@fleet/testkit';
import { startNode, type TestNode } from './support/node.js';

/** Counts the connections the controller listening on `port` accepts. */
function countConnections(port: () => number): { readonly count: number; stop(): void } {
  let count = 0;
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    if (socket.localPort === port()) count += 1;
  };
  subscribe('net.server.socket', onSocket);
  return {
    get count() {
      return count;
    },
    stop: () => unsubscribe('net.server.socket', onSocket),
  };
}

/** A verb's worth of requests: reads of several kinds, one after the other. */
async function severalRequests(client: ControllerClient): Promise<void> {
  await client.identity();
  await client.health();
  await client.snapshot({
    files: [{ domain: 'fixture', path: '~/.config/fixture/app.conf' }],
    backups: true,
  });
  await client.export({ path: '~/.config/fixture/app.conf' });
  await client.identity();
}

describe('client keep-alive: one connection per host', () => {
  let node: TestNode;
  let connections: ReturnType<typeof countConnections>;
  let token: string;

  before(async () => {
    node = await startNode();
    token = await node.issue(['config:read']);
    await node.write('~/.config/fixture/app.conf', 'name: app\n');
  });
  beforeEach(() => {
    connections = countConnections(() => node.controller.port);
  });
  afterEach(() => connections.stop());
  after(() => node?.dispose());

  it("sends a verb's sequential requests over one connection, and close() ends it", async () => {
    const client = createControllerClient({ host: 'node-01', url: node.url, token });
    try {
      await severalRequests(client);
      expect(connections.count).to.equal(1);
      client.close();
      await client.identity(); // after close: a new connection
      expect(connections.count).to.equal(2);
    } finally {
      client.close();
    }
  });

  it('each client (host) has its own connection', async () => {
    const a = createControllerClient({ host: 'node-01', url: node.url, token });
    const b = createControllerClient({ host: 'node-01-again', url: node.url, token });
    try {
      await severalRequests(a);
      await severalRequests(b);
      await a.identity();
      expect(connections.count).to.equal(2);
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('client keep-alive over https: one pinned connection per host', () => {
  let node: TestNode;
  let dir: string;
  let fingerprint: string;
  let token: string;

  before(async function () {
    requireSystemTools(
      this,
      [SYSTEM_TOOLS.openssl],
      'makes a self-signed certificate with openssl',
    );
    dir = await mkdtemp(join(tmpdir(), 'fleet-keepalive-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const cert = await readFile(join(dir, 'cert.pem'));
    fingerprint = certificateFingerprint(cert);
    node = await startNode({ tls: { cert, key: await readFile(join(dir, 'key.pem')) } });
    token = await node.issue(['config:read']);
    await node.write('~/.config/fixture/app.conf', 'name: app\n');
  });
  after(async () => {
    await node?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reuses the pinned socket, and pins the next new socket again', async () => {
    const connections = countConnections(() => node.controller.port);
    const client = createControllerClient({
      host: 'node-01',
      url: node.url,
      token,
      tlsFingerprint: fingerprint,
    });
    try {
      await severalRequests(client);
      expect(connections.count).to.equal(1);
      client.close();
      await client.identity();
      expect(connections.count).to.equal(2);
    } finally {
      client.close();
      connections.stop();
    }
  });

  it('refuses a socket whose certificate does not match the pin, before any request', async () => {
    const wrong = `sha256:${'AB:'.repeat(31)}AB`;
    const client = createControllerClient({
      host: 'node-01',
      url: node.url,
      token,
      tlsFingerprint: wrong,
    });
    try {
      const failure = await client.identity().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).to.have.property('code', 'TLS_FINGERPRINT_MISMATCH');
      // And again on the next request: nothing unpinned was kept in the pool.
      const again = await client.health().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(again).to.have.property('code', 'TLS_FINGERPRINT_MISMATCH');
    } finally {
      client.close();
    }
  });
});
