/**
 * Where a host's controller listens, from fleet.yaml's `controller` URL (issue 35 item 2): the
 * flags a bootstrap installs, so the controller answers where every verb connects.
 */
import { expect } from 'chai';
import { isFleetError } from '../src/errors.js';
import {
  controllerListen,
  controllerListenSchema,
  describeListen,
  pinnedCertificateRefusal,
  plannedListen,
  plannedListenSchema,
  type ControllerListen,
} from '../src/runtime/listen.js';
import { readPlan, sealPlan, type BootstrapPlanBody } from '../src/runtime/plan.js';

const PIN = `sha256:${Array.from({ length: 32 }, () => 'AB').join(':')}`;
const OTHER = `sha256:${Array.from({ length: 32 }, () => 'cd').join(':')}`;

describe('controllerListen (pure)', () => {
  const cases: ReadonlyArray<readonly [string, string, ControllerListen]> = [
    [
      'loopback, the scaffold default',
      'http://127.0.0.1:7701',
      { bind: '127.0.0.1', port: 7701, tls: false, allowedHosts: [] },
    ],
    [
      'another loopback address, another port',
      'http://127.0.0.2:7815',
      { bind: '127.0.0.2', port: 7815, tls: false, allowedHosts: [] },
    ],
    [
      'localhost binds 127.0.0.1',
      'http://localhost:7701',
      { bind: '127.0.0.1', port: 7701, tls: false, allowedHosts: [] },
    ],
    [
      'LOCALHOST in capitals',
      'http://LOCALHOST:7701',
      { bind: '127.0.0.1', port: 7701, tls: false, allowedHosts: [] },
    ],
    [
      'IPv6 loopback',
      'http://[::1]:7701',
      { bind: '::1', port: 7701, tls: false, allowedHosts: [] },
    ],
    [
      'https on a LAN address binds it',
      'https://192.168.1.20:7701',
      { bind: '192.168.1.20', port: 7701, tls: true, allowedHosts: [] },
    ],
    [
      'https on loopback',
      'https://127.0.0.2:7443',
      { bind: '127.0.0.2', port: 7443, tls: true, allowedHosts: [] },
    ],
    [
      'an IPv6 address',
      'https://[fd00::5]:7701',
      { bind: 'fd00::5', port: 7701, tls: true, allowedHosts: [] },
    ],
    [
      'a DNS name: every interface, and the name for the Host check',
      'https://Node-01.LAN:7701',
      { bind: '0.0.0.0', port: 7701, tls: true, allowedHosts: ['node-01.lan:7701'] },
    ],
    [
      'https without a port: 443, where the client connects',
      'https://node-01.lan',
      { bind: '0.0.0.0', port: 443, tls: true, allowedHosts: ['node-01.lan:443'] },
    ],
    [
      'https with :443 (URL drops the default port)',
      'https://10.0.0.4:443',
      { bind: '10.0.0.4', port: 443, tls: true, allowedHosts: [] },
    ],
    [
      'http without a port: 80',
      'http://127.0.0.1',
      { bind: '127.0.0.1', port: 80, tls: false, allowedHosts: [] },
    ],
    [
      'a trailing slash',
      'http://127.0.0.1:7701/',
      { bind: '127.0.0.1', port: 7701, tls: false, allowedHosts: [] },
    ],
  ];
  for (const [name, url, expected] of cases) {
    it(`${name}: ${url}`, () => {
      const listen = controllerListen(url);
      expect(listen).to.deep.equal(expected);
      // Every answer is what the wire schema accepts.
      expect(controllerListenSchema.parse(listen)).to.deep.equal(expected);
    });
  }

  for (const url of ['not a url', 'ftp://127.0.0.1:21', 'ssh://node:22']) {
    it(`refuses ${url} (USAGE)`, () => {
      try {
        controllerListen(url);
        expect.fail('accepted');
      } catch (error) {
        expect(isFleetError(error) && error.code).to.equal('USAGE');
      }
    });
  }
});

describe('describeListen (pure)', () => {
  const cases: ReadonlyArray<readonly [ControllerListen, string]> = [
    [{ bind: '127.0.0.1', port: 7701, tls: false, allowedHosts: [] }, '127.0.0.1:7701 http'],
    [{ bind: '::1', port: 7701, tls: true, allowedHosts: [] }, '[::1]:7701 https'],
    [
      { bind: '0.0.0.0', port: 7701, tls: true, allowedHosts: ['n.lan:7701'] },
      '0.0.0.0:7701 https (Host: n.lan:7701)',
    ],
  ];
  for (const [listen, text] of cases) {
    it(text, () => expect(describeListen(listen)).to.equal(text));
  }
});

describe('plannedListen and the pin (pure)', () => {
  it('carries the pin, or null', () => {
    expect(
      plannedListen({ controller: 'https://n.lan:7701', tls: { fingerprint: PIN } }),
    ).to.deep.equal({
      bind: '0.0.0.0',
      port: 7701,
      tls: true,
      allowedHosts: ['n.lan:7701'],
      fingerprint: PIN,
    });
    const plain = plannedListen({ controller: 'http://127.0.0.1:7702' });
    expect(plain.fingerprint).to.equal(null);
    expect(plannedListenSchema.parse(plain)).to.deep.equal(plain);
  });

  const cases: ReadonlyArray<readonly [string, string | null, string | undefined, boolean]> = [
    ['nothing pinned', null, OTHER, false],
    ['no certificate made (http)', PIN, undefined, false],
    ['equal', PIN, PIN, false],
    ['equal but for case', PIN, PIN.toLowerCase().replace('sha256:', 'SHA256:'), false],
    ['another certificate', PIN, OTHER, true],
  ];
  for (const [name, pinned, actual, refused] of cases) {
    it(`${name}: ${refused ? 'refused' : 'passes'}`, () => {
      const refusal = pinnedCertificateRefusal({ host: 'alpha', pinned, actual });
      if (!refused) {
        expect(refusal).to.equal(null);
        return;
      }
      expect(refusal?.code).to.equal('TLS_FINGERPRINT_MISMATCH');
      // One line that says what to pin and that nothing ran.
      expect(refusal?.message).to.include(`hosts.alpha.tls.fingerprint: '${actual}'`);
      expect(refusal?.message).to.include('nothing was activated');
      expect(refusal?.message).to.not.include('\n');
    });
  }

  it('a plan carries it, and its id covers it', () => {
    const body = {
      schema: 'fleet.bootstrap-plan/v1',
      host: 'alpha',
      nodeId: 'alpha',
      platform: 'linux',
      supervisor: 'systemd-user',
      route: 'ssh',
      artifact: {
        file: 'a.tgz',
        sha256: 'a'.repeat(64),
        bytes: 1,
        package: '@fleet/cli',
        version: '1.0.0',
        commit: null,
      },
      prior: { build: null, observedThrough: 'ssh' },
      repoCommit: null,
      protocol: 2,
      target: {
        nodeId: 'alpha',
        package: '@fleet/cli',
        version: '1.0.0',
        build: { sha256: 'a'.repeat(64), commit: null },
        protocol: { min: 2, max: 2 },
        catalog: { domains: [], probers: [], bootstrapAdapters: ['systemd-user'] },
      },
      listen: plannedListen({ controller: 'http://127.0.0.1:7702' }),
    } satisfies BootstrapPlanBody;
    const sealed = sealPlan(body);
    expect(readPlan(JSON.parse(JSON.stringify(sealed)), 'p').listen?.port).to.equal(7702);
    const moved = sealPlan({
      ...body,
      listen: plannedListen({ controller: 'http://127.0.0.1:7703' }),
    });
    expect(moved.id).to.not.equal(sealed.id);
  });
});
