/**
 * Issue 35 items 2 and 3 on the node: the controller's own certificate (made here, kept when it
 * still serves the listen), the `controller serve` flags a listen installs, the bounded and
 * redacted excerpt of a controller's log, and the runner's short-lived acceptance token (one per
 * run, revoked at its end — never one per poll).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { expect } from 'chai';
import { certificateFingerprint, normaliseFingerprint, type ControllerListen } from '@fleet/core';
import {
  certificateNames,
  controllerCertificateFiles,
  controllerListenFlags,
  ensureControllerCertificate,
  subjectAltNames,
} from '../src/tls/certificate.js';
import { logExcerpt, LOG_LINES } from '../src/lifecycle/controller-log.js';
import { LocalIdentityProbe } from '../src/lifecycle/live.js';
import { systemClock } from '../src/context.js';
import { statePaths } from '../src/state-paths.js';
import { TokenStore, tokenState } from '../src/tokens/store.js';

const FINGERPRINT = /^sha256:([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

const listen = (over: Partial<ControllerListen> = {}): ControllerListen => ({
  bind: '127.0.0.2',
  port: 7815,
  tls: true,
  allowedHosts: [],
  ...over,
});

describe('the controller certificate (issue 35 item 2)', function () {
  this.timeout(30_000);
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-cert-'));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('is made on the node: 0700 directory, 0600 files, its SANs, fleet.yaml’s fingerprint form', async () => {
    const made = await ensureControllerCertificate(
      home,
      listen({ bind: '0.0.0.0', allowedHosts: ['node-01.lan:7815'] }),
    );
    expect(made.created).to.equal(true);
    expect(made).to.include(controllerCertificateFiles(home));
    expect(made.certFile).to.equal(join(home, '.config/fleet/tls/controller-cert.pem'));
    expect(made.keyFile).to.equal(join(home, '.config/fleet/tls/controller-key.pem'));
    expect((await stat(join(home, '.config/fleet/tls'))).mode & 0o777).to.equal(0o700);
    expect((await stat(made.keyFile)).mode & 0o777).to.equal(0o600);
    expect((await stat(made.certFile)).mode & 0o777).to.equal(0o600);
    const cert = new X509Certificate(await readFile(made.certFile));
    expect(cert.checkPrivateKey(createPrivateKey(await readFile(made.keyFile)))).to.equal(true);
    expect(cert.subjectAltName).to.equal('DNS:node-01.lan, IP Address:127.0.0.1');
    // What the operator's client pins (core client/fingerprint.ts), in fleet.yaml's schema form.
    expect(made.fingerprint).to.match(FINGERPRINT);
    expect(made.fingerprint).to.equal(certificateFingerprint(await readFile(made.certFile)));
  });

  it('is kept when it still serves the listen (the pinned fingerprint stays), made anew when not', async () => {
    const first = await ensureControllerCertificate(home, listen());
    const again = await ensureControllerCertificate(home, listen({ port: 7816 }));
    expect(again).to.deep.equal({ ...first, created: false });
    const moved = await ensureControllerCertificate(home, listen({ bind: '127.0.0.3' }));
    expect(moved.created).to.equal(true);
    expect(moved.fingerprint).to.not.equal(first.fingerprint);
    expect(subjectAltNames(new X509Certificate(await readFile(moved.certFile)).subjectAltName).ips)
      .to.include('127.0.0.3')
      .and.include('127.0.0.1');
  });

  it('a key that is not the certificate’s is replaced', async () => {
    const first = await ensureControllerCertificate(home, listen());
    const other = await mkdtemp(join(tmpdir(), 'fleet-cert-other-'));
    try {
      const stranger = await ensureControllerCertificate(other, listen());
      const { writeFile } = await import('node:fs/promises');
      await writeFile(first.keyFile, await readFile(stranger.keyFile), { mode: 0o600 });
      const fixed = await ensureControllerCertificate(home, listen());
      expect(fixed.created).to.equal(true);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('serves https, and a client pinning its fingerprint gets that certificate', async () => {
    const made = await ensureControllerCertificate(home, listen({ bind: '127.0.0.1' }));
    const server = createServer(
      { cert: await readFile(made.certFile), key: await readFile(made.keyFile) },
      (_req, res) => res.end('ok'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const seen = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
          const fp = socket.getPeerCertificate().fingerprint256;
          socket.destroy();
          resolve(fp);
        });
        socket.once('error', reject);
      });
      expect(normaliseFingerprint(seen)).to.equal(normaliseFingerprint(made.fingerprint));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('certificate names and listen flags (pure)', () => {
  const names: Array<[string, ControllerListen, { ips: string[]; dns: string[] }]> = [
    ['loopback', listen({ bind: '127.0.0.1' }), { ips: ['127.0.0.1'], dns: [] }],
    ['another loopback', listen(), { ips: ['127.0.0.1', '127.0.0.2'], dns: [] }],
    [
      'a DNS name on every interface',
      listen({ bind: '0.0.0.0', allowedHosts: ['n.lan:7815'] }),
      { ips: ['127.0.0.1'], dns: ['n.lan'] },
    ],
    [
      'IPv6, normalised',
      listen({ bind: '0:0:0:0:0:0:0:1' }),
      { ips: ['127.0.0.1', '::1'], dns: [] },
    ],
  ];
  for (const [what, input, expected] of names) {
    it(`names: ${what}`, () => {
      expect(certificateNames(input)).to.deep.equal(expected);
    });
  }

  it('reads node’s subjectAltName text', () => {
    const held = subjectAltNames('DNS:N.lan, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect([...held.dns]).to.deep.equal(['n.lan']);
    expect([...held.ips]).to.deep.equal(['127.0.0.1', '::1']);
    expect([...subjectAltNames(undefined).ips]).to.deep.equal([]);
  });

  const files = { certFile: '/h/c.pem', keyFile: '/h/k.pem' };
  const flags: Array<[string, ControllerListen, typeof files | null, string[]]> = [
    [
      'plain loopback, another port',
      listen({ bind: '127.0.0.1', port: 7702, tls: false }),
      null,
      ['--bind', '127.0.0.1', '--port', '7702'],
    ],
    [
      'https on an address',
      listen(),
      files,
      ['--bind', '127.0.0.2', '--port', '7815', '--tls-cert', '/h/c.pem', '--tls-key', '/h/k.pem'],
    ],
    [
      'a DNS name: every interface, the Host check',
      listen({ bind: '0.0.0.0', allowedHosts: ['a.lan:7815', 'b.lan:7815'] }),
      files,
      [
        '--bind',
        '0.0.0.0',
        '--port',
        '7815',
        '--tls-cert',
        '/h/c.pem',
        '--tls-key',
        '/h/k.pem',
        '--allowed-host',
        'a.lan:7815,b.lan:7815',
      ],
    ],
  ];
  for (const [what, input, tlsFiles, expected] of flags) {
    it(`flags: ${what}`, () => {
      expect(controllerListenFlags(input, tlsFiles)).to.deep.equal(expected);
    });
  }

  it('flags: https without its files is refused (USAGE)', () => {
    expect(() => controllerListenFlags(listen(), null)).to.throw(/needs its certificate/);
  });
});

describe('the controller log excerpt (issue 35 item 3, pure)', () => {
  const secret = 'hunter2-very-secret';
  const redact = (line: string) => line.split(secret).join('{{ secret.PASSWORD }}');
  const cases: Array<[string, string, string | null]> = [
    ['empty', '\n\n', null],
    [
      'the lines, joined',
      'Error: listen EADDRINUSE: address already in use 127.0.0.1:7701\n    at Server.listen\n',
      'Error: listen EADDRINUSE: address already in use 127.0.0.1:7701 | at Server.listen',
    ],
    [
      'a token’s secret part',
      'Authorization: Bearer flt_0123456789abcdef_SeCrEt-value_xyz',
      'Authorization: Bearer flt_0123456789abcdef_<redacted>',
    ],
    ['a secret value of the node', `password=${secret}`, 'password={{ secret.PASSWORD }}'],
    ['control characters', 'a\x1b[31mred\x07', 'a\\x1b[31mred\\x07'],
  ];
  for (const [what, text, expected] of cases) {
    it(what, () => expect(logExcerpt(text, redact)).to.equal(expected));
  }

  it(`keeps the last ${LOG_LINES} lines, each and all bounded`, () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i} ${'x'.repeat(300)}`).join('\n');
    const excerpt = logExcerpt(text) as string;
    expect(excerpt.length).to.be.at.most(1_500);
    expect(excerpt).to.include('line 49 ');
    expect(excerpt).to.not.include('line 29 ');
    expect(excerpt).to.not.include('\n');
  });
});

describe('the acceptance token (issue 35 item 3)', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-probe-'));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  const acceptanceTokens = async () =>
    (await new TokenStore(statePaths(home), systemClock).list()).filter(
      (record) => record.client === 'fleet-runtime-acceptance',
    );

  it('every poll and retry reuses one token; release revokes it; nothing active is left', async () => {
    const probe = new LocalIdentityProbe(home);
    // A controller that is not there: each poll fails, as a runtime that did not come up.
    const command = ['node', 'run.js', 'controller', 'serve', '--port', '1'];
    for (let poll = 0; poll < 5; poll += 1) {
      expect(await probe.identity(command, 'n')).to.equal(null);
    }
    expect(await acceptanceTokens()).to.have.length(1);
    await probe.release();
    await probe.release(); // idempotent
    // A second run (a retry of the whole acceptance) issues one more, and revokes it too.
    expect(await probe.identity(command, 'n')).to.equal(null);
    await probe.release();
    const left = await acceptanceTokens();
    expect(left).to.have.length(2);
    expect(left.map((record) => tokenState(record, new Date()))).to.deep.equal([
      'revoked',
      'revoked',
    ]);
  });
});
