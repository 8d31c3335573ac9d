/**
 * The operator's controller client against a real node:http(s) server on 127.0.0.1. The server is
 * a throwaway stand-in: these tests check the client's side of the contract (error mapping,
 * deadlines, TLS pinning, validation, bounded concurrency), not the controller.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../src/errors.js';
import { FLEET_PROTOCOL_VERSION } from '../src/wire/protocol.js';
import { createControllerClient, newOperationId } from '../src/client/client.js';
import { ControllerError } from '../src/client/errors.js';
import { forEachHost } from '../src/client/for-each-host.js';
import { operatorLogPath, recordOperatorVerb } from '../src/client/operator-log.js';
import { certificateFingerprint } from '../src/client/fingerprint.js';

const TOKEN = 'flt_test_0123456789abcdef0123456789abcdef';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  protocol: string | undefined;
  body: string;
}

interface TestServer {
  url: string;
  seen: Seen[];
  sockets: Set<Socket>;
  close(): Promise<void>;
}

async function listen(
  server: http.Server | https.Server,
  scheme: string,
  seen: Seen[],
): Promise<TestServer> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    seen,
    sockets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function handle(seen: Seen[], handler: Handler) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        protocol: req.headers['fleet-protocol'] as string | undefined,
        body,
      });
      handler(req, body, res);
    });
  };
}

function serve(handler: Handler): Promise<TestServer> {
  const seen: Seen[] = [];
  return listen(http.createServer(handle(seen, handler)), 'http', seen);
}

/** Answers as a controller of `protocol` would (`null`: protocol 1, which sent no header). */
function reply(
  res: ServerResponse,
  status: number,
  value: unknown,
  protocol: number | null = FLEET_PROTOCOL_VERSION,
): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  res
    .writeHead(status, {
      'content-type': 'application/json',
      ...(protocol === null ? {} : { 'fleet-protocol': String(protocol) }),
    })
    .end(text);
}

const IDENTITY = {
  nodeId: 'node-01',
  nodeIdFlag: 'node-01',
  package: '@fleet/controller',
  version: '0.1.0',
  build: { sha256: null, commit: null },
  protocol: 1,
  catalog: { domains: [], probers: [], bootstrapAdapters: [] },
  pid: 4242,
  startedAt: '2025-01-01T00:00:00.000Z',
  health: { status: 'ok', checks: [] },
};

async function rejected(promise: Promise<unknown>): Promise<FleetError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError rejection');
}

describe('client/createControllerClient', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const track = async (server: Promise<TestServer>) => {
    const s = await server;
    servers.push(s);
    return s;
  };
  const client = (url: string, extra: { timeoutMs?: number; tlsFingerprint?: string } = {}) =>
    createControllerClient({ host: 'node-01', url, token: TOKEN, ...extra });

  it('sends the bearer token to the route path and returns the validated identity', async () => {
    const server = await track(serve((_req, _body, res) => reply(res, 200, IDENTITY)));
    const identity = await client(server.url).identity();
    expect(identity).to.deep.equal(IDENTITY);
    expect(server.seen).to.have.length(1);
    expect(server.seen[0]).to.include({
      method: 'GET',
      url: '/v1/identity',
      authorization: `Bearer ${TOKEN}`,
    });
  });

  it("sends its protocol version, and refuses a fleet answer in another one (an old node's), naming both", async () => {
    const old = await track(
      serve((req, _body, res) => {
        if (req.url === '/v1/identity') reply(res, 200, { ...IDENTITY, protocol: 1 }, null);
        else if (req.url === '/v1/install')
          reply(
            res,
            400,
            { error: { code: 'BAD_REQUEST', message: 'Unrecognized key: "actions"' } },
            null,
          );
        else if (req.url === '/v1/inventory') reply(res, 502, '<html>bad gateway</html>', null);
        else reply(res, 200, { nodeId: 'node-01', files: [], truncated: false }, null);
      }),
    );
    const c = client(old.url);
    // Identity answers any protocol: it is how an operator learns which one a node speaks.
    expect((await c.identity()).protocol).to.equal(1);
    const read = await rejected(
      c.snapshot({ files: [{ domain: 'router', path: '~/a' }], backups: false }),
    );
    expect(read.code).to.equal('PROTOCOL_MISMATCH');
    expect(read.exitCode).to.equal(5);
    expect(read.message).to.equal(
      `node-01: the node speaks protocol 1 (it sends no fleet-protocol header); this fleet CLI speaks protocol ${FLEET_PROTOCOL_VERSION}: upgrade the node (fleet upgrade node-01 --confirm), or use a fleet CLI of its protocol`,
    );
    const write = await rejected(
      c.install({
        domain: 'router',
        files: [
          {
            fileId: 'router.yaml',
            path: '~/.config/router/router.yaml',
            expectedSha256: null,
            content: 'x\n',
          },
        ],
        parameters: {},
        actions: { reload: 'router-reload' },
      }),
    );
    expect(write.code).to.equal('PROTOCOL_MISMATCH'); // not the old node's BAD_REQUEST
    // Something that is not a fleet answer at all is not read as a protocol.
    expect((await rejected(c.inventory())).code).to.equal('HOST_UNREACHABLE');
    for (const seen of old.seen) expect(seen.protocol).to.equal(String(FLEET_PROTOCOL_VERSION));

    const newer = await track(
      serve((_req, _body, res) => reply(res, 200, {}, FLEET_PROTOCOL_VERSION + 1)),
    );
    const ahead = await rejected(client(newer.url).inventory());
    expect(ahead.message).to.contain(`the node speaks protocol ${FLEET_PROTOCOL_VERSION + 1}`);
    expect(ahead.message).to.contain('upgrade this fleet CLI');

    const refusing = await track(
      serve((_req, _body, res) =>
        reply(
          res,
          400,
          {
            error: {
              code: 'PROTOCOL_MISMATCH',
              message: 'this node speaks fleet protocol 3; the client speaks protocol 2',
            },
          },
          3,
        ),
      ),
    );
    const told = await rejected(client(refusing.url).inventory());
    expect(told.message).to.equal(
      'node-01: this node speaks fleet protocol 3; the client speaks protocol 2',
    );
  });

  it('maps a wire error to the fleet error of the same code, exit code from core', async () => {
    const server = await track(
      serve((req, _body, res) => {
        if (req.url === '/v1/inventory')
          reply(res, 403, { error: { code: 'SCOPE_DENIED', message: 'needs config:read' } });
        else
          reply(res, 412, {
            error: { code: 'PRECONDITION_FAILED', message: 'changed', liveSha256: 'a'.repeat(64) },
          });
      }),
    );
    const denied = await rejected(client(server.url).inventory());
    expect(denied.code).to.equal('SCOPE_DENIED');
    expect(denied.exitCode).to.equal(4);
    expect(denied.message).to.match(/^node-01: needs config:read/);
    expect(denied.message).not.to.include(TOKEN);

    const conflict = await rejected(
      client(server.url).install({
        domain: 'router',
        files: [
          {
            fileId: 'router.yaml',
            path: '~/.config/router/router.yaml',
            expectedSha256: null,
            content: 'x\n',
          },
        ],
        parameters: {},
      }),
    );
    expect(conflict.code).to.equal('PRECONDITION_FAILED');
    expect(conflict.exitCode).to.equal(3);
    expect((conflict as ControllerError).wire?.liveSha256).to.equal('a'.repeat(64));
  });

  it('treats 401/403 with an unknown code or no fleet body as exit 4', async () => {
    const server = await track(
      serve((req, _body, res) => {
        if (req.url === '/v1/health')
          reply(res, 401, { error: { code: 'TOKEN_FROM_THE_FUTURE', message: 'no' } });
        else reply(res, 403, '<html>forbidden</html>');
      }),
    );
    const unknown = await rejected(client(server.url).health());
    expect(unknown.code).to.equal('AUTH_INVALID');
    expect(unknown.exitCode).to.equal(4);
    expect(unknown.message).to.include('TOKEN_FROM_THE_FUTURE');
    const html = await rejected(client(server.url).identity());
    expect(html.exitCode).to.equal(4);
  });

  it('sends a ULID operation id with every mutating call (generated when not given)', async () => {
    const server = await track(
      serve((_req, _body, res) =>
        reply(res, 500, { error: { code: 'IO_ERROR', message: 'disk' } }),
      ),
    );
    const c = client(server.url);
    const failure = await rejected(c.capture({ path: '~/.claude/CLAUDE.md' }));
    expect(failure.code).to.equal('IO_ERROR');
    const sent = JSON.parse(server.seen[0]?.body ?? '{}') as { operationId: string };
    expect(sent.operationId).to.match(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    const mine = newOperationId();
    await rejected(c.capture({ path: '~/.claude/CLAUDE.md', operationId: mine }));
    expect(
      (JSON.parse(server.seen[1]?.body ?? '{}') as { operationId: string }).operationId,
    ).to.equal(mine);
  });

  it('refuses an invalid request before sending anything (exit 2)', async () => {
    const server = await track(serve((_req, _body, res) => reply(res, 200, {})));
    const bad = await rejected(client(server.url).export({ path: '/etc/passwd' }));
    expect(bad.code).to.equal('BAD_REQUEST');
    expect(bad.exitCode).to.equal(2);
    const badId = await rejected(client(server.url).operationStatus('../../etc'));
    expect(badId.exitCode).to.equal(2);
    expect(server.seen).to.have.length(0);
  });

  it('checks every body, though a body already checked is remembered: a changed one is still refused', async () => {
    const server = await track(
      serve((_req, _body, res) =>
        reply(res, 500, { error: { code: 'IO_ERROR', message: 'disk' } }),
      ),
    );
    const first = client(server.url);
    for (let i = 0; i < 2; i += 1) {
      expect((await rejected(first.export({ path: '~/.claude/CLAUDE.md' }))).code).to.equal(
        'IO_ERROR',
      );
    }
    // The same route and shape, one field changed: refused before a byte is sent, by any client.
    for (const c of [first, client(server.url)]) {
      const bad = await rejected(c.export({ path: '/etc/passwd' }));
      expect(bad.code).to.equal('BAD_REQUEST');
      const extra = await rejected(c.export({ path: '~/.claude/CLAUDE.md', more: 1 } as never));
      expect(extra.code).to.equal('BAD_REQUEST');
    }
    expect(server.seen.map((seen) => seen.body)).to.deep.equal(
      Array(2).fill(JSON.stringify({ path: '~/.claude/CLAUDE.md' })),
    );
  });

  it('refuses an answer that does not match the route schema, or is not JSON', async () => {
    const server = await track(
      serve((req, _body, res) => {
        if (req.url === '/v1/identity') reply(res, 200, { ...IDENTITY, extra: true });
        else if (req.url === '/v1/health') reply(res, 200, 'not json');
        else reply(res, 200, '{"status":"ok","status":"degraded","checks":[]}');
      }),
    );
    const extra = await rejected(client(server.url).identity());
    expect(extra.code).to.equal('RESPONSE_INVALID');
    expect(extra.exitCode).to.equal(5);
    expect(extra.message).to.include('node-01');
    expect((await rejected(client(server.url).health())).code).to.equal('RESPONSE_INVALID');
    const duplicate = await rejected(client(server.url).inventory());
    expect(duplicate.message).to.match(/duplicate key/);
  });

  it('gives up after the per-host timeout: HOST_UNREACHABLE naming the host (exit 5)', async () => {
    const server = await track(serve(() => undefined)); // never answers
    const started = Date.now();
    const error = await rejected(client(server.url, { timeoutMs: 200 }).identity());
    expect(Date.now() - started).to.be.lessThan(2_000);
    expect(error.code).to.equal('HOST_UNREACHABLE');
    expect(error.exitCode).to.equal(5);
    expect(error.message).to.match(/node-01 .*within 200 ms/);
  });

  it('reports a refused connection as HOST_UNREACHABLE (exit 5)', async () => {
    const server = await serve(() => undefined);
    const { url } = server;
    await server.close();
    const error = await rejected(client(url).identity());
    expect(error.code).to.equal('HOST_UNREACHABLE');
    expect(error.exitCode).to.equal(5);
    expect(error.message).to.include(`node-01 (${url})`).and.to.include('connection refused');
  });

  it('reports a connection reset mid-answer as HOST_UNREACHABLE', async () => {
    const server = await track(serve((req) => req.socket.destroy()));
    const error = await rejected(client(server.url).identity());
    expect(error.exitCode).to.equal(5);
  });

  it('sends a request again on a new socket when the idle one it reused was closed', async () => {
    // The controller closed the kept-alive socket while it sat idle: the request that picked it
    // up never reached the controller (here: the socket is cut at its second request).
    const requestsOn = new Map<Socket, number>();
    const server = await track(
      serve((req, _body, res) => {
        const count = (requestsOn.get(req.socket) ?? 0) + 1;
        requestsOn.set(req.socket, count);
        if (count === 2) req.socket.destroy();
        else reply(res, 200, IDENTITY);
      }),
    );
    const c = client(server.url);
    try {
      await c.identity();
      expect(await c.identity()).to.deep.equal(IDENTITY);
      expect(server.seen).to.have.length(3);
      expect([...requestsOn.values()]).to.deep.equal([2, 1]);
    } finally {
      c.close();
    }
  });

  it('does not send again when a new socket is cut (the request may have been served)', async () => {
    const server = await track(serve((req) => req.socket.destroy()));
    const c = client(server.url);
    try {
      expect((await rejected(c.identity())).code).to.equal('HOST_UNREACHABLE');
      expect(server.seen).to.have.length(1);
    } finally {
      c.close();
    }
  });

  describe('TLS with a pinned fingerprint', () => {
    let dir: string;
    let cert: Buffer;
    let key: Buffer;
    let tlsServer: TestServer;
    let connections = 0;
    before(async function () {
      dir = await mkdtemp(join(tmpdir(), 'fleet-client-tls-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      cert = await readFile(join(dir, 'cert.pem'));
      key = await readFile(join(dir, 'key.pem'));
      const seen: Seen[] = [];
      const server = https.createServer(
        { cert, key },
        handle(seen, (_req, _body, res) => reply(res, 200, IDENTITY)),
      );
      server.on('connection', () => (connections += 1));
      tlsServer = await listen(server, 'https', seen);
    });
    after(async () => {
      await tlsServer?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('talks to a self-signed controller whose certificate matches the pin', async () => {
      const pin = certificateFingerprint(cert);
      expect(pin).to.match(/^sha256:([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      const identity = await client(tlsServer.url, {
        tlsFingerprint: pin.toLowerCase(),
      }).identity();
      expect(identity.nodeId).to.equal('node-01');
      expect(tlsServer.seen.at(-1)?.authorization).to.equal(`Bearer ${TOKEN}`);
    });

    it('refuses a mismatched certificate before a single request byte reaches the server (exit 4)', async () => {
      const before = tlsServer.seen.length;
      const connectionsBefore = connections;
      const wrong = `sha256:${Array.from({ length: 32 }, () => 'AB').join(':')}`;
      const error = await rejected(client(tlsServer.url, { tlsFingerprint: wrong }).identity());
      expect(error.code).to.equal('TLS_FINGERPRINT_MISMATCH');
      expect(error.exitCode).to.equal(4);
      expect(error.message).to.include(certificateFingerprint(cert));
      // A connection was made (that is how the certificate was seen); no request came over it.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(connections).to.be.greaterThan(connectionsBefore);
      expect(tlsServer.seen.length).to.equal(before);
    });

    it('refuses https without a pin', async () => {
      const error = await rejected(client(tlsServer.url).identity());
      expect(error.code).to.equal('TLS_FINGERPRINT_MISMATCH');
    });
  });
});

describe('client/forEachHost', () => {
  it('bounds the hosts in flight and returns every outcome in order, never rejecting', async () => {
    let inFlight = 0;
    let peak = 0;
    const hosts = Array.from({ length: 20 }, (_, i) => `node-${String(i + 1).padStart(2, '0')}`);
    const settled: string[] = [];
    const outcomes = await forEachHost(
      hosts,
      async (host) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 10));
        inFlight -= 1;
        if (host === 'node-03')
          throw new FleetError('HOST_UNREACHABLE', `host ${host} is unreachable`);
        if (host === 'node-07') throw new Error('a bug');
        return host.toUpperCase();
      },
      { concurrency: 4, onSettled: (outcome) => settled.push(outcome.host) },
    );
    expect(peak).to.equal(4);
    expect(outcomes.map((o) => o.host)).to.deep.equal(hosts);
    expect(settled).to.have.members(hosts);
    const failed = outcomes.filter((o) => !o.ok);
    expect(failed.map((o) => o.host)).to.deep.equal(['node-03', 'node-07']);
    expect(failed.map((o) => (o.ok ? '' : o.error.code))).to.deep.equal([
      'HOST_UNREACHABLE',
      'INTERNAL',
    ]);
    expect(outcomes.filter((o) => o.ok)).to.have.length(18);
  });

  it('goes on past an unreachable host with real connections', async () => {
    const server = await serve((_req, _body, res) => reply(res, 200, IDENTITY));
    const dead = await serve(() => undefined);
    await dead.close();
    try {
      const urls: Record<string, string> = {
        'node-01': server.url,
        'node-02': dead.url,
        'node-03': server.url,
      };
      const outcomes = await forEachHost(Object.keys(urls), (host) =>
        createControllerClient({
          host,
          url: urls[host] as string,
          token: TOKEN,
          timeoutMs: 2_000,
        }).identity(),
      );
      expect(outcomes.map((o) => o.ok)).to.deep.equal([true, false, true]);
      const second = outcomes[1];
      expect(second && !second.ok && second.error.exitCode).to.equal(5);
    } finally {
      await server.close();
    }
  });
});

describe('client/operator log', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-operator-log-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('appends JSON lines, mode 0600, with the operation id and never the token', async () => {
    const env = { XDG_STATE_HOME: join(home, 'state') };
    const operationId = newOperationId();
    const path = await recordOperatorVerb(
      {
        verb: 'config install',
        host: 'node-01',
        operationId,
        domain: 'router',
        paths: ['~/.config/router/router.yaml'],
        outcome: 'failed',
        code: 'AUTH_INVALID',
        exitCode: 4,
        detail: `rejected: Authorization: Bearer ${TOKEN} and ${TOKEN}`,
      },
      { env, home, secrets: [TOKEN] },
    );
    await recordOperatorVerb({ verb: 'drift', outcome: 'ok' }, { env, home });
    expect(path).to.equal(join(home, 'state', 'fleet', 'operator.jsonl'));
    expect(operatorLogPath({}, home)).to.equal(
      join(home, '.local', 'state', 'fleet', 'operator.jsonl'),
    );
    expect((await stat(path)).mode & 0o777).to.equal(0o600);
    const text = await readFile(path, 'utf8');
    expect(text).not.to.include(TOKEN);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).to.have.length(2);
    expect(lines[0]).to.include({
      verb: 'config install',
      host: 'node-01',
      operationId,
      exitCode: 4,
    });
    expect(lines[1]).to.include({ verb: 'drift', host: null, operationId: null });
  });

  it('narrows a log found wider than 0600', async () => {
    const env = { XDG_STATE_HOME: join(home, 'state') };
    const path = await recordOperatorVerb({ verb: 'drift', outcome: 'ok' }, { env, home });
    await writeFile(path, '', { mode: 0o644 });
    const { chmod } = await import('node:fs/promises');
    await chmod(path, 0o644);
    await recordOperatorVerb({ verb: 'drift', outcome: 'ok' }, { env, home });
    expect((await stat(path)).mode & 0o777).to.equal(0o600);
  });
});
