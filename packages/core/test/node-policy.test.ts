/**
 * The node policy file (contract §5.1, docs/node-policy.md), pure parts and the reader: the
 * strict schema as a table of cases (each refusal names its line and field), the home-path
 * pattern matcher as a table, fleet's own paths, the check against a node's plugins, and the
 * file's mode and owner.
 */
import { expect } from 'chai';
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError, type Problem } from '../src/errors.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import { isFleetOwnPath } from '../src/policy/fleet-paths.js';
import {
  checkNodePolicy,
  defaultNodePolicy,
  formatNodePolicy,
  parseNodePolicy,
  readNodePolicyFile,
} from '../src/policy/load.js';
import {
  isHomePattern,
  matchHomePattern,
  parseHomePattern,
  patternReachesFleetState,
} from '../src/policy/pattern.js';

function problemsOf(text: string): Problem[] {
  try {
    parseNodePolicy(text, 'node-policy.yaml');
  } catch (error) {
    expect(error).to.be.instanceOf(FleetError);
    expect((error as FleetError).code).to.equal('NODE_POLICY_INVALID');
    return [...(error as FleetError).problems];
  }
  return [];
}

describe('node policy schema', () => {
  it('accepts a full policy and fills the defaults', () => {
    const { policy } = parseNodePolicy(
      [
        'version: 1',
        'supervisor: { kind: systemd-user, unit: fleet-controller.service }',
        'domains:',
        '  router:',
        '    paths:',
        '      router.yaml: [~/srv/router/router.yaml]',
        "      volume: ['~/srv/router/*/volume.yaml']",
        '    actions:',
        '      router-reload:',
        '        argv: [/usr/bin/systemctl, --user, reload, router.service]',
        '        timeoutSeconds: 15',
        '  transport-identity:',
        '  harness-policy: { unattended: allow }',
        '  files:',
        "    patterns: ['~/.zshrc', '~/.config/**']",
        'versions: { tools: [node, git], path: [/usr/local/bin, /usr/bin] }',
        'symlinkInto: [~/dotfiles]',
        'bootstrap: { allow: true, supervisors: [systemd-user] }',
        '',
      ].join('\n'),
      'node-policy.yaml',
    );
    expect(policy.domains['router']?.actions?.['router-reload']).to.deep.equal({
      argv: ['/usr/bin/systemctl', '--user', 'reload', 'router.service'],
      timeoutSeconds: 15,
      output: 'discard',
    });
    expect(policy.domains['transport-identity']).to.deep.equal({ unattended: 'deny' });
    expect(policy.domains['harness-policy']?.unattended).to.equal('allow');
    expect(policy.supervisor).to.deep.equal({
      kind: 'systemd-user',
      unit: 'fleet-controller.service',
    });
    expect(parseNodePolicy('version: 1\n', 'f').policy).to.deep.equal({
      version: 1,
      domains: {},
      versions: { tools: [] },
      symlinkInto: [],
      bootstrap: { allow: false },
    });
  });

  const cases: [
    title: string,
    text: string,
    line: number | undefined,
    path: string,
    message: RegExp,
  ][] = [
    ['an unknown field', 'version: 1\ncolour: blue\n', 2, 'colour', /unknown field/],
    [
      'an unknown field in a domain',
      'version: 1\ndomains:\n  router:\n    reload: [/bin/sh]\n',
      4,
      'domains.router.reload',
      /unknown field/,
    ],
    ['a duplicate key', 'version: 1\ndomains: {}\ndomains: {}\n', 3, '', /[Dd]uplicate|unique/],
    ['another version', 'version: 2\n', 1, 'version', /must be 1/],
    [
      'a bad pattern (** inside a segment)',
      "version: 1\ndomains:\n  files:\n    patterns: ['~/.config/a**']\n",
      4,
      'domains.files.patterns[0]',
      /\*\* must be a whole segment/,
    ],
    [
      'a pattern with ..',
      "version: 1\ndomains:\n  files:\n    patterns: ['~/../etc/*']\n",
      4,
      'domains.files.patterns[0]',
      /"\.\." component/,
    ],
    [
      'a pattern outside the home',
      "version: 1\ndomains:\n  files:\n    patterns: ['/etc/**']\n",
      4,
      'domains.files.patterns[0]',
      /must start with ~\//,
    ],
    [
      'a pattern of the whole home',
      "version: 1\ndomains:\n  files:\n    patterns: ['~/**']\n",
      4,
      'domains.files.patterns[0]',
      /first segment cannot be \*\*/,
    ],
    [
      'a path override into the node state',
      "version: 1\ndomains:\n  router:\n    paths:\n      volume: ['~/.local/state/fleet/**']\n",
      5,
      'domains.router.paths.volume[0]',
      /fleet's own state/,
    ],
    [
      'a path override naming the env file',
      'version: 1\ndomains:\n  router:\n    paths:\n      volume: [~/.config/fleet/env]\n',
      5,
      'domains.router.paths.volume[0]',
      /fleet's own state/,
    ],
    [
      'a symlinkInto directory in the node state',
      'version: 1\nsymlinkInto: [~/.local/share/fleet]\n',
      2,
      'symlinkInto[0]',
      /fleet's own state/,
    ],
    [
      'an action argv that is a shell line',
      "version: 1\ndomains:\n  router:\n    actions:\n      r: { argv: 'systemctl reload router' }\n",
      5,
      'domains.router.actions.r.argv',
      /argv array/,
    ],
    [
      'an action whose program is not an absolute path',
      'version: 1\ndomains:\n  router:\n    actions:\n      r: { argv: [systemctl, reload] }\n',
      5,
      'domains.router.actions.r.argv[0]',
      /absolute path: no PATH lookup, no shell/,
    ],
    [
      'an action timeout past the install bound',
      'version: 1\ndomains:\n  router:\n    actions:\n      r: { argv: [/bin/true], timeoutSeconds: 60 }\n',
      5,
      'domains.router.actions.r.timeoutSeconds',
      /25/,
    ],
    [
      'an output bound on an action whose output is discarded',
      'version: 1\ndomains:\n  router:\n    actions:\n      r: { argv: [/bin/true], outputBytes: 10 }\n',
      5,
      'domains.router.actions.r.outputBytes',
      /only with output: return/,
    ],
    [
      'an action id in upper case',
      'version: 1\ndomains:\n  router:\n    actions:\n      Reload: { argv: [/bin/true] }\n',
      5,
      'domains.router.actions.Reload',
      /action id/,
    ],
    [
      'a tool that is not a bare name',
      'version: 1\nversions: { tools: [/bin/sh] }\n',
      2,
      'versions.tools[0]',
      /bare command name/,
    ],
    [
      'a supervisor without its unit',
      'version: 1\nsupervisor: { kind: systemd-user }\n',
      2,
      'supervisor.unit',
      /expected string|Invalid/,
    ],
    [
      'an unknown supervisor',
      'version: 1\nsupervisor: { kind: cron }\n',
      2,
      'supervisor.kind',
      /Invalid|expected/,
    ],
    [
      'a bootstrap supervisor that is none',
      'version: 1\nbootstrap: { allow: true, supervisors: [none] }\n',
      2,
      'bootstrap.supervisors[0]',
      /Invalid|expected/,
    ],
    [
      'a trusted key that is RSA (ADR 0019: Ed25519 only)',
      "version: 1\nruntime:\n  trustedKeys:\n    - 'ssh-rsa AAAAB3NzaC1yc2EAAAABAw== me'\n",
      4,
      'runtime.trustedKeys[0]',
      /the key type is "ssh-rsa", not ssh-ed25519: only ssh-ed25519 keys sign releases/,
    ],
    [
      'a trusted key that is no key',
      "version: 1\nruntime: { trustedKeys: ['release key'] }\n",
      2,
      'runtime.trustedKeys[0]',
      /the key type is "release", not ssh-ed25519/,
    ],
    [
      'an unknown field in runtime',
      'version: 1\nruntime: { allowUnsigned: true, trust: all }\n',
      2,
      'runtime.trust',
      /unknown field/,
    ],
    [
      'a lab section on a node the lab supervisor does not run (lab dev plugins)',
      'version: 1\nsupervisor: { kind: systemd-user, unit: fleet-controller.service }\nlab:\n  devPlugins: [{ name: fleet-plugin-x, root: /src/x }]\n',
      3,
      'lab',
      /only a lab node's policy has a lab section/,
    ],
    [
      'a lab section with no supervisor at all',
      'version: 1\nlab: { devPlugins: [] }\n',
      2,
      'lab',
      /only a lab node's policy has a lab section/,
    ],
    [
      'a lab dev plugin whose folder is relative',
      'version: 1\nsupervisor: { kind: lab, socket: /l/nodes/n/supervisor.sock }\nlab:\n  devPlugins: [{ name: fleet-plugin-x, root: src/x }]\n',
      4,
      'lab.devPlugins[0].root',
      /absolute directory/,
    ],
    [
      'a lab dev plugin that is not a package name',
      'version: 1\nsupervisor: { kind: lab, socket: /l/nodes/n/supervisor.sock }\nlab:\n  devPlugins: [{ name: ../x, root: /src/x }]\n',
      4,
      'lab.devPlugins[0].name',
      /npm package name/,
    ],
    [
      'allowUnsigned that is not a boolean',
      "version: 1\nruntime: { allowUnsigned: 'yes' }\n",
      2,
      'runtime.allowUnsigned',
      /boolean/,
    ],
  ];
  for (const [title, text, line, path, message] of cases) {
    it(`refuses ${title}, with its line and field`, () => {
      const problems = problemsOf(text);
      expect(problems, JSON.stringify(problems)).to.have.length.greaterThan(0);
      const [first] = problems;
      if (path !== '') expect(first?.path).to.equal(path);
      expect(first?.line).to.equal(line);
      expect(first?.message).to.match(message);
    });
  }

  it('reads the runtime section (ADR 0019): trusted ssh-ed25519 keys, allowUnsigned default false', () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH';
    expect(
      parseNodePolicy(`version: 1\nruntime:\n  trustedKeys: ['${key} release@seat']\n`, 'f').policy
        .runtime,
    ).to.deep.equal({ trustedKeys: [`${key} release@seat`], allowUnsigned: false });
    expect(
      parseNodePolicy('version: 1\nruntime: { allowUnsigned: true }\n', 'f').policy.runtime,
    ).to.deep.equal({ trustedKeys: [], allowUnsigned: true });
    expect(parseNodePolicy('version: 1\n', 'f').policy.runtime).to.equal(undefined);
    // node-policy init writes no runtime section: such a node refuses runtime changes.
    expect(defaultNodePolicy(['router'], { bootstrap: { allow: true } })).to.not.have.property(
      'runtime',
    );
  });

  it("reads a lab node's dev plugins beside its lab supervisor", () => {
    const { policy } = parseNodePolicy(
      [
        'version: 1',
        'supervisor: { kind: lab, socket: /tmp/lab/nodes/node-01/supervisor.sock }',
        'lab:',
        '  devPlugins: [{ name: "@acme/fleet-x", root: /home/me/fleet-x }]',
      ].join('\n'),
      'f',
    );
    expect(policy.lab).to.deep.equal({
      devPlugins: [{ name: '@acme/fleet-x', root: '/home/me/fleet-x' }],
    });
  });

  it('writes what it reads: a default policy round-trips through its YAML', () => {
    const input = defaultNodePolicy(['router', 'harness-policy'], {
      tools: ['node'],
      bootstrap: { allow: true, supervisors: ['lab'] },
      supervisor: { kind: 'lab', socket: '/tmp/lab/nodes/node-01/supervisor.sock' },
    });
    const text = formatNodePolicy(input);
    expect(text).to.match(/^# fleet node policy/);
    expect(parseNodePolicy(text, 'f').policy).to.deep.equal({
      version: 1,
      domains: { 'harness-policy': { unattended: 'deny' }, router: { unattended: 'deny' } },
      versions: { tools: ['node'] },
      symlinkInto: [],
      bootstrap: { allow: true, supervisors: ['lab'] },
      supervisor: { kind: 'lab', socket: '/tmp/lab/nodes/node-01/supervisor.sock' },
    });
  });
});

describe('home-path patterns', () => {
  const table: [pattern: string, path: string, matches: boolean][] = [
    ['~/.zshrc', '~/.zshrc', true],
    ['~/.zshrc', '~/.zshrc.bak', false],
    ['~/.config/**', '~/.config/nvim/init.lua', true],
    ['~/.config/**', '~/.config/a/b/c/d', true],
    ['~/.config/**', '~/.config', false], // dir/** is what lies under dir, never dir itself
    ['~/.config/**', '~/.configx/a', false],
    ['~/.config/*/init.lua', '~/.config/nvim/init.lua', true],
    ['~/.config/*/init.lua', '~/.config/a/b/init.lua', false],
    ['~/.config/**/init.lua', '~/.config/a/b/init.lua', true],
    ['~/.config/**/init.lua', '~/.config/init.lua', true],
    ['~/srv/*.yaml', '~/srv/router.yaml', true],
    ['~/srv/*.yaml', '~/srv/.yaml', true],
    ['~/srv/*.yaml', '~/srv/router.yml', false],
    ['~/srv/a*b*c', '~/srv/abc', true],
    ['~/srv/a*b*c', '~/srv/aXbYc', true],
    ['~/srv/ab*bc', '~/srv/abc', false],
    ['~/srv/*', '~/srv/../etc/passwd', false],
    ['~/srv/**', '~/srv/../../etc/passwd', false],
    ['~/srv/*', '/etc/passwd', false],
    ['~/Srv/*', '~/srv/x', true], // compared folded (core foldPath)
  ];
  for (const [pattern, path, matches] of table) {
    it(`${pattern} ${matches ? 'matches' : 'does not match'} ${path}`, () => {
      expect(matchHomePattern(pattern, path)).to.equal(matches);
    });
  }

  it('refuses malformed patterns', () => {
    for (const bad of [
      '',
      '~',
      '/x/*',
      '~/**',
      '~/a/**b',
      '~/a/***',
      '~/a//b',
      '~/a/../b',
      '~/./a',
      '~/a\\b',
      '~/a\u0000',
    ]) {
      expect(isHomePattern(bad), JSON.stringify(bad)).to.equal(false);
      expect(() => parseHomePattern(bad)).to.throw(FleetError);
    }
  });

  it("knows which patterns are about fleet's own state", () => {
    expect(patternReachesFleetState('~/.local/state/fleet/**')).to.equal(true);
    expect(patternReachesFleetState('~/.config/fleet/env.d/*.env')).to.equal(true);
    expect(patternReachesFleetState('~/.config/fleet/node-policy.yaml')).to.equal(true);
    // Broader patterns are accepted: their matches in fleet's state are refused at match time.
    expect(patternReachesFleetState('~/.config/**')).to.equal(false);
    expect(patternReachesFleetState('~/.config/fleet/transport.yaml')).to.equal(false);
  });
});

describe("fleet's own paths", () => {
  const table: [path: string, own: boolean][] = [
    ['~/.local/state/fleet', true],
    ['~/.local/state/fleet/tokens.json', true],
    ['~/.local/state/fleet/backups/router/x.bak', true],
    ['~/.local/share/fleet/runtime/current', true],
    ['~/.config/fleet/env', true],
    ['~/.config/fleet/env.d/10-a.env', true],
    ['~/.config/fleet/node-policy.yaml', true],
    ['~/.config/fleet/credentials.json', true],
    ['~/.CONFIG/fleet/Env', true],
    ['~/AppData/Local/fleet/state/x', true],
    ['~/.config/fleet/transport.yaml', false], // the transport-identity domain's file
    ['~/.config/fleet/envoy.yaml', false],
    ['~/.local/state/fleetwood', false],
    ['~/.local/share/router/volume/router.yaml', false],
  ];
  for (const [path, own] of table) {
    it(`${path} ${own ? 'is' : 'is not'} fleet's own`, () => {
      expect(isFleetOwnPath(path)).to.equal(own);
    });
  }
});

describe('node policy against the node’s plugins', () => {
  const router: DomainDeclaration = {
    domain: 'router',
    description: 'r',
    files: [
      {
        id: 'router.yaml',
        path: '~/.config/router/router.yaml',
        canonical: 'router.yaml',
        kind: 'whole',
        format: 'yaml',
      },
    ],
    derivedPaths: [
      {
        id: 'volume',
        path: '~/.local/share/router/volume/router.yaml',
        format: 'yaml',
        derivedFrom: 'router.yaml',
        description: 'v',
      },
    ],
    hostVariables: [],
    coupling: { kind: 'process', actions: [{ kind: 'reload', description: 'r' }] },
  };
  const harness: DomainDeclaration = {
    domain: 'harness-policy',
    description: 'h',
    files: [
      {
        id: 'CLAUDE.md',
        path: '~/.claude/CLAUDE.md',
        canonical: 'CLAUDE.md',
        kind: 'whole',
        format: 'markdown',
      },
    ],
    hostVariables: [],
    coupling: { kind: 'none' },
  };

  it('names a domain no plugin provides, an unknown file id, a reach into another domain, and unattended for a coupled domain', () => {
    const text = [
      'version: 1',
      'domains:',
      '  nosuch: {}',
      '  router:',
      '    unattended: allow',
      '    paths:',
      '      config: [~/x.yaml]',
      "      volume: ['~/.claude/*']",
      '  harness-policy: { unattended: allow }',
      '',
    ].join('\n');
    const { policy, lineOf } = parseNodePolicy(text, 'p.yaml');
    expect(checkNodePolicy(policy, [router, harness], 'p.yaml', lineOf)).to.deep.equal([
      {
        file: 'p.yaml',
        line: 3,
        path: 'domains.nosuch',
        message: 'no loaded plugin provides domain nosuch',
      },
      {
        file: 'p.yaml',
        line: 5,
        path: 'domains.router.unattended',
        message:
          'router is process-coupled: its unattended installs are always refused (contract §10.3)',
      },
      {
        file: 'p.yaml',
        line: 7,
        path: 'domains.router.paths.config',
        message: 'router has no file or derived path config (it has: router.yaml, volume)',
      },
      {
        file: 'p.yaml',
        line: 8,
        path: 'domains.router.paths.volume[0]',
        message: '~/.claude/* reaches ~/.claude/CLAUDE.md, a path of domain harness-policy',
      },
    ]);
    expect(
      checkNodePolicy(defaultNodePolicy(['router']) as never, [router, harness]),
    ).to.deep.equal([]);
  });
});

describe('node policy file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-policy-file-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function codeOf(file: string): Promise<FleetError> {
    try {
      await readNodePolicyFile(file, dir);
    } catch (error) {
      return error as FleetError;
    }
    throw new Error('read');
  }

  it('reads a 0600 file of this user, with its sha256', async () => {
    const file = join(dir, 'p.yaml');
    await writeFile(file, 'version: 1\n', { mode: 0o600 });
    const loaded = await readNodePolicyFile(file, dir);
    expect(loaded.policy.version).to.equal(1);
    expect(loaded.sha256).to.match(/^[0-9a-f]{64}$/);
  });

  it('refuses a missing file naming the fix, a wider mode, another owner and a symbolic link', async () => {
    const missing = await codeOf(join(dir, 'none.yaml'));
    expect(missing.code).to.equal('NODE_POLICY_MISSING');
    expect(missing.suggestions.join(' ')).to.contain(`fleet node-policy init --home ${dir}`);

    const wide = join(dir, 'wide.yaml');
    await writeFile(wide, 'version: 1\n');
    for (const mode of [0o640, 0o604, 0o660]) {
      await chmod(wide, mode);
      const error = await codeOf(wide);
      expect([error.code, error.message], mode.toString(8)).to.deep.include.members([
        'NODE_POLICY_INSECURE',
      ]);
      expect(error.message)
        .to.contain(`mode 0${mode.toString(8)}`)
        .and.contain('chmod 600');
    }
    await chmod(wide, 0o600);
    try {
      await readNodePolicyFile(wide, dir, { uid: (process.getuid?.() ?? 0) + 1 });
      expect.fail('read a file of another owner');
    } catch (error) {
      expect((error as FleetError).code).to.equal('NODE_POLICY_INSECURE');
      expect((error as FleetError).message).to.contain('owned by uid');
    }
    const link = join(dir, 'link.yaml');
    await symlink(wide, link);
    expect((await codeOf(link)).code).to.equal('NODE_POLICY_INVALID');
  });
});
