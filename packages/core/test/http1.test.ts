/**
 * The client's HTTP/1.1 (`client/http1.ts`): a request head as the controller reads it, and answers
 * read from a connection's bytes however they are cut — strictly, within bounds (the answer is
 * untrusted). Then the same answers from a real TCP peer on 127.0.0.1 through the client.
 */
import { expect } from 'chai';
import net, { type AddressInfo, type Server, type Socket } from 'node:net';
import { AnswerReader, MAX_HEAD_BYTES, requestHead, type ReadResult } from '../src/client/http1.js';
import { createControllerClient } from '../src/client/client.js';
import { FleetError } from '../src/errors.js';

/** Reads `text` cut into pieces of `size` bytes (the last piece shorter), then the end if asked. */
function read(text: string | Buffer, size: number, max = 1024 * 1024, end = false): ReadResult {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  const reader = new AnswerReader(max);
  let result: ReadResult = { state: 'partial' };
  for (let at = 0; at < bytes.length && result.state === 'partial'; at += size) {
    result = reader.push(bytes.subarray(at, at + size));
  }
  return end && result.state === 'partial' ? reader.end() : result;
}

function body(result: ReadResult): string {
  if (result.state !== 'complete') return expect.fail(`not complete: ${JSON.stringify(result)}`);
  return result.answer.body.toString('utf8');
}

const json = '{"nodeId":"node-01","files":[]}';
const withLength = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: ${json.length}\r\nfleet-protocol: 2\r\n\r\n${json}`;
const chunked =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nfleet-protocol: 2\r\n\r\n' +
  `5\r\n${json.slice(0, 5)}\r\n1a;name=value\r\n${json.slice(5)}\r\n0\r\nx-trailer: t\r\n\r\n`;

describe('client http1: the request head', () => {
  it('names the method, path, Host, then each header, then a blank line', () => {
    expect(
      requestHead('POST', '/v1/snapshot', '127.0.0.1:7701', {
        authorization: 'Bearer flt_x',
        'content-length': 12,
      }),
    ).to.equal(
      'POST /v1/snapshot HTTP/1.1\r\nHost: 127.0.0.1:7701\r\nauthorization: Bearer flt_x\r\ncontent-length: 12\r\n\r\n',
    );
  });

  it('refuses a value that would end a header early, or a path with a space', () => {
    expect(() => requestHead('GET', '/v1/identity', 'h', { authorization: 'a\r\nx: y' })).to.throw(
      TypeError,
      /authorization header/,
    );
    expect(() => requestHead('GET', '/v1/identity x', 'h', {})).to.throw(TypeError);
    expect(() => requestHead('GET', '/v1/identity', 'h', { 'bad name': '1' })).to.throw(TypeError);
  });
});

describe('client http1: reading an answer', () => {
  for (const size of [1, 2, 3, 7, 64, 100_000]) {
    it(`reads a Content-Length answer and a chunked one cut every ${size} bytes`, () => {
      const plain = read(withLength, size);
      expect(body(plain)).to.equal(json);
      if (plain.state !== 'complete') return;
      expect(plain.answer.status).to.equal(200);
      expect(plain.answer.headers.get('fleet-protocol')).to.equal('2');
      expect(plain.answer.keepAlive).to.equal(true);
      expect(plain.excess).to.equal(false);
      const coded = read(chunked, size);
      expect(body(coded)).to.equal(json);
      if (coded.state === 'complete') expect(coded.answer.keepAlive).to.equal(true);
    });
  }

  it('reads an answer without a length to the end of the connection, which it then ends', () => {
    const result = read(
      'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
      5,
      1024,
      true,
    );
    expect(body(result)).to.equal('');
    if (result.state === 'complete') {
      expect(result.answer.status).to.equal(431);
      expect(result.answer.keepAlive).to.equal(false);
    }
    expect(body(read('HTTP/1.1 200 OK\r\n\r\nall of it', 4, 1024, true))).to.equal('all of it');
  });

  it('ends the connection after an answer that says close, or an HTTP/1.0 one', () => {
    for (const text of [
      withLength.replace('fleet-protocol: 2', 'Connection: keep-alive, Close'),
      withLength.replace('HTTP/1.1', 'HTTP/1.0'),
    ]) {
      const result = read(text, 10);
      expect(body(result)).to.equal(json);
      if (result.state === 'complete') expect(result.answer.keepAlive).to.equal(false);
    }
  });

  it('joins a repeated header, and says when bytes follow the answer', () => {
    const result = read(
      withLength.replace('fleet-protocol: 2', 'x-a: 1\r\nX-A: 2') + 'HTTP/1.1',
      1000,
    );
    if (result.state !== 'complete') return expect.fail(JSON.stringify(result));
    expect(result.answer.headers.get('x-a')).to.equal('1, 2');
    expect(result.excess).to.equal(true);
  });

  const invalid: [string, string, RegExp][] = [
    ['no status line', `HTTP/2 200\r\n\r\n`, /status line/],
    ['a status out of range', 'HTTP/1.1 999 Nope\r\n\r\n', /status line/],
    ['an interim answer', 'HTTP/1.1 100 Continue\r\n\r\n', /interim/],
    ['a folded header', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n  more\r\n\r\n', /malformed/],
    ['a header without a name', 'HTTP/1.1 200 OK\r\n: 1\r\n\r\n', /malformed/],
    ['a bare LF in a header', 'HTTP/1.1 200 OK\r\nx-a: 1\nx-b: 2\r\n\r\n', /control character/],
    ['a NUL in a header', 'HTTP/1.1 200 OK\r\nx-a: 1\u0000\r\n\r\n', /control character/],
    [
      'a length that is no number',
      'HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n',
      /not a number/,
    ],
    [
      'two lengths',
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
      /two Content-Lengths/,
    ],
    [
      'a length over the bound',
      'HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n',
      /exceeds 1024 bytes/,
    ],
    [
      'another transfer coding',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
      /not chunked/,
    ],
    [
      'a length and chunks',
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
      /both/,
    ],
    [
      'a bad chunk size',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      /chunk size/,
    ],
    [
      'a chunk longer than its size',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n',
      /longer than its size/,
    ],
    [
      'chunks over the bound',
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n401\r\n${'x'.repeat(1025)}\r\n0\r\n\r\n`,
      /exceeds 1024 bytes/,
    ],
    [
      'a head over the bound',
      `HTTP/1.1 200 OK\r\nx-a: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`,
      /head exceeds/,
    ],
  ];
  for (const [what, text, why] of invalid) {
    it(`refuses ${what}`, () => {
      for (const size of [1, 9, 100_000]) {
        const result = read(text, size, 1024, true);
        expect(result.state, `${what} cut every ${size}`).to.equal('invalid');
        if (result.state === 'invalid') expect(result.why).to.match(why);
      }
    });
  }

  it('says an answer cut short, or none at all, when the connection ends', () => {
    const cut = read(withLength.slice(0, -3), 1000, 1024, true);
    expect(cut).to.deep.equal({ state: 'invalid', why: 'the answer was cut short' });
    expect(new AnswerReader(1024).end()).to.deep.equal({ state: 'invalid', why: 'no answer' });
  });
});

describe('client http1: answers from a real peer, through the client', () => {
  let server: Server;
  let url: string;
  let answer: (socket: Socket) => void;
  before(async () => {
    server = net.createServer((socket) => {
      socket.once('data', () => answer(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const identity = {
    nodeId: 'node-01',
    nodeIdFlag: 'node-01',
    package: '@fleet/controller',
    version: '0.1.0',
    build: { sha256: null, commit: null },
    protocol: 2,
    catalog: { domains: [], probers: [], bootstrapAdapters: [] },
    pid: 1,
    startedAt: '2025-01-01T00:00:00.000Z',
    health: { status: 'ok', checks: [] },
  };
  const client = () =>
    createControllerClient({ host: 'node-01', url, token: 'flt_t', timeoutMs: 2000 });

  it('reads a chunked answer written a few bytes at a time, with trailers', async () => {
    const text = JSON.stringify(identity);
    answer = (socket) => {
      const bytes = Buffer.from(
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${text.length.toString(16)}\r\n${text}\r\n0\r\nx-t: 1\r\n\r\n`,
      );
      let at = 0;
      const next = () => {
        if (at >= bytes.length) return;
        socket.write(bytes.subarray(at, (at += 7)), next);
      };
      next();
    };
    const c = client();
    try {
      expect(await c.identity()).to.deep.equal(identity);
    } finally {
      c.close();
    }
  });

  it('reads an answer that runs to the end of the connection', async () => {
    answer = (socket) => socket.end(`HTTP/1.1 200 OK\r\n\r\n${JSON.stringify(identity)}`);
    const c = client();
    try {
      expect(await c.identity()).to.deep.equal(identity);
    } finally {
      c.close();
    }
  });

  it('refuses what is no HTTP answer as HOST_UNREACHABLE, naming why', async () => {
    answer = (socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n');
    const c = client();
    try {
      await c.identity().then(
        () => expect.fail('expected a refusal'),
        (error: FleetError) => {
          expect(error.code).to.equal('HOST_UNREACHABLE');
          expect(error.message).to.contain('does not start with an HTTP/1.x status line');
        },
      );
    } finally {
      c.close();
    }
  });
});
