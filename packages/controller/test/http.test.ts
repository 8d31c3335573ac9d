/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   Wire answers are parsed JSON, checked against their zod schemas by the test client; the
   assertions navigate them as plain data. */
/** The HTTP boundary (catalogue A5, A7, A10, E39): default deny, Host, bounds, timeouts, JSON. */
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { FLEET_PROTOCOL_VERSION } from '@fleet/core';
import { APP } from './support/fixture-registry.js';
import { call, newId, startNode, type TestNode } from './support/node.js';
import { bodyOf, exchangeRaw, openSocket, statusOf } from './support/raw.js';

describe('HTTP boundary', () => {
  let node: TestNode;
  let token: string;
  before(async () => {
    node = await startNode({
      limits: {
        maxBodyBytes: 64 * 1024,
        headersTimeoutMs: 300,
        requestTimeoutMs: 600,
        maxConnections: 8,
      },
    });
    token = await node.issue(['config:read', 'config:install']);
  });
  after(async () => node.dispose());

  describe('default-deny routes', () => {
    for (const [method, path] of [
      ['GET', '/v1/exec'],
      ['POST', '/v1/install/../identity'],
      ['GET', '//v1/identity'],
      ['GET', '/v1/%69dentity'],
      ['GET', '/v1/identity/'],
      ['GET', '/V1/IDENTITY'],
      ['GET', '/v1/identity?debug=1'],
      ['PUT', '/v1/install'],
      ['GET', '/v1/install'],
    ] as const) {
      it(`${method} ${path} → 404 OP_UNKNOWN, never a handler`, async () => {
        const answer = await node.call(path, { method, token });
        expect([answer.status, answer.body.error.code]).to.deep.equal([404, 'OP_UNKNOWN']);
      });
    }
  });

  describe('Host and Origin', () => {
    it('refuses a Host that does not name the controller (421)', async () => {
      const answer = await node.call('/v1/identity', {
        token,
        headers: { host: 'evil.example:80' },
      });
      expect([answer.status, answer.body.error.code]).to.deep.equal([421, 'ORIGIN_REJECTED']);
    });
    it('accepts localhost and 127.0.0.1 on its port', async () => {
      const port = new URL(node.url).port;
      expect(
        (await node.call('/v1/identity', { token, headers: { host: `localhost:${port}` } })).status,
      ).to.equal(200);
    });
    it('refuses cross-origin (browser) requests', async () => {
      const answer = await node.call('/v1/identity', {
        token,
        headers: { origin: 'http://evil.example' },
      });
      expect([answer.status, answer.body.error.code]).to.deep.equal([403, 'ORIGIN_REJECTED']);
    });
  });

  describe('bodies', () => {
    const host = () => `127.0.0.1:${new URL(node.url).port}`;

    it('413 from the declared length alone, then the connection is closed', async () => {
      const { text, closed } = await exchangeRaw(
        node.url,
        `POST /v1/export HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nFleet-Protocol: ${FLEET_PROTOCOL_VERSION}\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n`,
      );
      expect(statusOf(text)).to.equal(413);
      expect(bodyOf(text).error.code).to.equal('REQUEST_TOO_LARGE');
      expect(closed).to.equal(true);
    });

    it('413 as soon as a chunked body crosses the cap, then the connection is closed', async () => {
      const chunk = 'x'.repeat(16 * 1024);
      const { text, closed } = await exchangeRaw(
        node.url,
        `POST /v1/export HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${token}\r\nFleet-Protocol: ${FLEET_PROTOCOL_VERSION}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        (socket: Socket) => {
          // Bounded: at most 64 chunks (1 MiB) — the server must stop us well before.
          let sent = 0;
          const pump = (): void => {
            while (sent < 64 && !socket.destroyed) {
              sent += 1;
              if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) {
                socket.once('drain', pump);
                return;
              }
            }
          };
          pump();
        },
      );
      expect(statusOf(text)).to.equal(413);
      expect(closed).to.equal(true);
    });

    it('audits the refusal (counted per address: no operation id was read)', async () => {
      await node.controller.runtime.audit.flush();
      const audit = await readFile(`${node.home}/.local/state/fleet/audit.jsonl`, 'utf8');
      expect(audit).to.contain('"code":"REQUEST_TOO_LARGE"');
      expect(audit).to.match(/"aggregate":\{"count":\d+,"remote":"127\.0\.0\.1"/);
    });

    const hostile: [string, string][] = [
      ['a duplicate key', `{"path":"${APP}","path":"~/.ssh/id_rsa"}`],
      ['__proto__', `{"path":"${APP}","__proto__":{"isAdmin":true}}`],
      ['constructor', `{"path":"${APP}","constructor":{"prototype":{"isAdmin":true}}}`],
      ['an unknown field', `{"path":"${APP}","follow":true}`],
      ['a number for a string', '{"path":1e400}'],
      ['truncated JSON', `{"path":"${APP}"`],
      ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
      ['not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]).toString('latin1')],
    ];
    for (const [what, raw] of hostile) {
      it(`400 BAD_REQUEST for ${what}, and no prototype is touched`, async () => {
        const answer = await node.call('/v1/export', {
          token,
          raw: what === 'not UTF-8' ? Buffer.from(raw, 'latin1') : raw,
        });
        expect([answer.status, answer.body.error.code]).to.deep.equal([400, 'BAD_REQUEST']);
        expect(({} as Record<string, unknown>)['isAdmin']).to.equal(undefined);
      });
    }

    it('400 for a body that is not application/json, and for a GET with a body', async () => {
      const wrongType = await node.call('/v1/export', {
        token,
        raw: `{"path":"${APP}"}`,
        headers: { 'content-type': 'text/plain' },
      });
      expect(wrongType.body.error.code).to.equal('BAD_REQUEST');
      const getWithBody = await node.call('/v1/identity', { method: 'GET', token, raw: '{}' });
      expect(getWithBody.body.error.code).to.equal('BAD_REQUEST');
    });

    it('400 PATH_INVALID for hostile paths, decided before any filesystem call', async () => {
      for (const path of [
        '~/../x',
        '/etc/passwd',
        '~root/x',
        '~/a\\..\\..\\x',
        '~/a\u0000b',
        `~/${'a'.repeat(300)}`,
        '~/.',
        '~/x/',
      ]) {
        const answer = await node.call('/v1/export', { token, body: { path } });
        expect(answer.status, path).to.equal(400);
        expect(answer.body.error.code, path).to.be.oneOf(['BAD_REQUEST', 'PATH_INVALID']);
      }
      // Percent escapes and full-width dots are just characters: not decoded, not "..".
      for (const path of ['~/%2e%2e/x', '~/\uff0e\uff0e/x']) {
        const answer = await node.call('/v1/export', { token, body: { path } });
        expect([answer.status, answer.body.error.code], path).to.deep.equal([
          403,
          'PATH_OUTSIDE_ROOT',
        ]);
      }
    });
  });

  describe('slow and exhausting clients', () => {
    it('answers 408 to headers that never finish, and closes', async () => {
      const { text, closed } = await exchangeRaw(
        node.url,
        'GET /v1/identity HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      );
      expect(closed).to.equal(true);
      expect(statusOf(text)).to.equal(408);
      expect(bodyOf(text).error.code).to.equal('REQUEST_TIMEOUT');
    });

    it('answers 408 to a body that trickles past the request timeout, and closes', async () => {
      const port = new URL(node.url).port;
      const { text, closed } = await exchangeRaw(
        node.url,
        `POST /v1/export HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nFleet-Protocol: ${FLEET_PROTOCOL_VERSION}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pa`,
      );
      expect(closed).to.equal(true);
      expect(statusOf(text)).to.equal(408);
    });

    it('caps authenticated connections with 503 and keeps serving once they go', async () => {
      const idle: Socket[] = [];
      for (let i = 0; i < 8; i += 1) {
        const socket = await openSocket(node.url);
        idle.push(socket);
        // A complete request on a keep-alive socket: the server has certainly counted it once
        // it has answered.
        await new Promise<void>((resolve) => {
          socket.once('data', () => resolve());
          socket.write(
            `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:${new URL(node.url).port}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
          );
        });
      }
      const over = await call(node.url, '/v1/health', { token });
      expect([over.status, over.body.error.code]).to.deep.equal([503, 'OVERLOADED']);
      await Promise.all(
        idle.map((socket) => new Promise<void>((resolve) => socket.end(() => resolve()))),
      );
      await new Promise((resolve) => setImmediate(resolve));
      let served = 0;
      for (let attempt = 0; attempt < 50 && served !== 200; attempt += 1) {
        served = (await call(node.url, '/v1/health', { token })).status;
      }
      expect(served).to.equal(200);
    });
  });

  it('rejects a mutating request whose operation id is far from the node clock (CLOCK_SKEW)', async () => {
    const old = '01ARZ3NDEKTSV4RRFFQ69G5FAV'; // 2016
    const answer = await node.call('/v1/install', {
      token,
      body: {
        operationId: old,
        domain: 'fixture',
        files: [{ fileId: 'app.conf', path: APP, expectedSha256: null, content: 'x' }],
        parameters: {},
      },
    });
    expect([answer.status, answer.body.error.code]).to.deep.equal([400, 'CLOCK_SKEW']);
    expect(answer.body.error.message).to.contain('2016');
    expect(newId()).to.have.length(26);
  });
});
