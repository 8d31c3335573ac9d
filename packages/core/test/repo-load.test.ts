import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError, type Problem } from '../src/errors.js';
import {
  hostEntry,
  hostVariables,
  loadRepo,
  parseHostVariables,
  parseManifest,
  readRepoFile,
  type FleetRepo,
} from '../src/repo/load.js';

function thrown(fn: () => unknown): FleetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError to be thrown');
}

async function rejected(promise: Promise<unknown>): Promise<FleetError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError rejection');
}

const FINGERPRINT = `sha256:${Array.from({ length: 32 }, () => 'AB').join(':')}`;

// Line numbers matter: tests below point at them.
const MANIFEST = `apiVersion: fleet/v1
canonicalVersion: 1.2.0
hosts:
  alpha:
    controller: http://127.0.0.1:7701
    platform: linux
    supervisor: systemd-user
    domains: [router]
  beta:
    controller: https://beta.example.net:7701
    tls: { fingerprint: "${FINGERPRINT}" }
    platform: win32
    supervisor: windows-task
domains:
  router: { unattended: allow }
`;

/** The manifest with one line replaced (`from` must occur exactly once). */
function edit(from: string, to: string): string {
  expect(MANIFEST.split(from)).to.have.length(2, `fixture edit ${from}`);
  return MANIFEST.replace(from, to);
}

function problemsOf(fn: () => unknown): Problem[] {
  const error = thrown(fn);
  expect(error.code).to.equal('FLEET_YAML_INVALID');
  expect(error.exitCode).to.equal(2);
  return [...error.problems];
}

describe('repo/load', () => {
  describe('parseManifest', () => {
    it('accepts a valid manifest and fills in the defaults', () => {
      const manifest = parseManifest(MANIFEST);
      expect(manifest.hosts['alpha']).to.deep.equal({
        controller: 'http://127.0.0.1:7701',
        platform: 'linux',
        supervisor: 'systemd-user',
        domains: ['router'],
      });
      expect(manifest.hosts['beta']?.domains).to.deep.equal([]);
      expect(manifest.hosts['beta']?.tls?.fingerprint).to.equal(FINGERPRINT);
      expect(manifest.artifacts).to.deep.equal([]);
      expect(manifest.domains).to.deep.equal({ router: { unattended: 'allow' } });
    });

    it('names the file, field path and line of an unknown field', () => {
      const text = edit('    platform: linux\n', '    platform: linux\n    colour: blue\n');
      expect(problemsOf(() => parseManifest(text))).to.deep.equal([
        { file: 'fleet.yaml', line: 7, path: 'hosts.alpha.colour', message: 'unknown field' },
      ]);
    });

    it('uses the file name it is given', () => {
      const [problem] = problemsOf(() => parseManifest(edit('1.2.0', 'one'), 'other/fleet.yaml'));
      expect(problem).to.include({ file: 'other/fleet.yaml', path: 'canonicalVersion', line: 2 });
    });

    const refused: [title: string, text: string, path: string, line: number, message: RegExp][] = [
      [
        'a bad platform',
        edit('platform: linux', 'platform: beos'),
        'hosts.alpha.platform',
        6,
        /linux/,
      ],
      [
        'a bad supervisor',
        edit('supervisor: windows-task', 'supervisor: cron'),
        'hosts.beta.supervisor',
        13,
        /systemd-user/,
      ],
      [
        'a bad unattended value',
        edit('unattended: allow', 'unattended: maybe'),
        'domains.router.unattended',
        15,
        /allow/,
      ],
      ['a foreign apiVersion', edit('fleet/v1', 'fleet/v2'), 'apiVersion', 1, /fleet\/v1/],
      [
        'a bad canonicalVersion',
        edit('1.2.0', 'latest'),
        'canonicalVersion',
        2,
        /semantic version/,
      ],
      // a key is reported at its own line, even when its value is a block below it
      [
        'an upper-case host name',
        edit('  alpha:', '  Alpha:'),
        'hosts.Alpha',
        4,
        /invalid key: must be a host name/,
      ],
      [
        'a domain listed twice',
        edit('[router]', '[router, router]'),
        'hosts.alpha.domains',
        8,
        /twice/,
      ],
      [
        'a non-loopback http:// controller',
        edit('http://127.0.0.1:7701', 'http://10.0.0.5:7701'),
        'hosts.alpha.controller',
        5,
        /non-loopback controller must use https/,
      ],
      [
        'a loopback-looking host name that is not loopback',
        edit('http://127.0.0.1:7701', 'http://127.0.0.1.evil.example:7701'),
        'hosts.alpha.controller',
        5,
        /non-loopback/,
      ],
      [
        'an https:// controller without tls.fingerprint',
        edit(`    tls: { fingerprint: "${FINGERPRINT}" }\n`, ''),
        'hosts.beta.tls',
        9, // tls is absent: the nearest key that exists is beta's
        /needs tls.fingerprint/,
      ],
      [
        'a malformed fingerprint',
        edit(FINGERPRINT, 'sha256:AB'),
        'hosts.beta.tls.fingerprint',
        11,
        /32 colon-separated hex bytes/,
      ],
      [
        'credentials in the controller URL',
        edit('http://127.0.0.1:7701', 'http://u:p@127.0.0.1:7701'),
        'hosts.alpha.controller',
        5,
        /without credentials/,
      ],
      [
        'a path in the controller URL',
        edit('http://127.0.0.1:7701', 'http://127.0.0.1:7701/api'),
        'hosts.alpha.controller',
        5,
        /without credentials or path/,
      ],
    ];
    for (const [title, text, path, line, message] of refused) {
      it(`refuses ${title} at ${path} (line ${line})`, () => {
        const problems = problemsOf(() => parseManifest(text));
        expect(problems).to.have.length(1);
        expect(problems[0]).to.include({ file: 'fleet.yaml', path, line });
        expect(problems[0]?.message).to.match(message);
      });
    }

    for (const controller of [
      'http://localhost:7701',
      'http://[::1]:7701',
      'http://127.1.2.3:7701',
    ]) {
      it(`accepts the loopback controller ${controller}`, () => {
        const manifest = parseManifest(edit('http://127.0.0.1:7701', controller));
        expect(manifest.hosts['alpha']?.controller).to.equal(controller);
      });
    }

    it('refuses duplicate YAML keys, naming the line', () => {
      const text = edit('    platform: linux\n', '    platform: linux\n    platform: darwin\n');
      const error = thrown(() => parseManifest(text));
      expect(error.code).to.equal('FLEET_YAML_INVALID');
      expect(error.problems[0]).to.include({ file: 'fleet.yaml', line: 7 });
      expect(error.problems[0]?.message).to.match(/unique/i);
    });

    it('refuses __proto__ keys, even where the schema has a free-form map', () => {
      const text = edit('hosts:\n', 'hosts:\n  __proto__: { controller: x }\n');
      const error = thrown(() => parseManifest(text));
      expect(error.problems[0]).to.include({ file: 'fleet.yaml', line: 4 });
      expect(error.problems[0]?.message).to.contain('__proto__');
    });

    it('reports every problem at once', () => {
      const text = edit('platform: linux', 'platform: beos\n    colour: blue').replace(
        'supervisor: windows-task',
        'supervisor: cron',
      );
      const problems = problemsOf(() => parseManifest(text));
      expect(problems.map((p) => p.path)).to.have.members([
        'hosts.alpha.platform',
        'hosts.alpha.colour',
        'hosts.beta.supervisor',
      ]);
    });
  });

  describe('parseHostVariables', () => {
    const FILE = 'hosts/alpha.yaml';

    it('accepts a flat map of strings, and an empty file as no variables', () => {
      expect(parseHostVariables('node_id: alpha\nport: "7701"\n', FILE)).to.deep.equal({
        node_id: 'alpha',
        port: '7701',
      });
      expect(parseHostVariables('', FILE)).to.deep.equal({});
      expect(parseHostVariables('# only a comment\n', FILE)).to.deep.equal({});
    });

    const refused: [title: string, text: string, line: number, message: RegExp][] = [
      ['an unquoted number', 'a: x\nport: 7701\n', 2, /must be a string/],
      ['a boolean', 'enabled: true\n', 1, /must be a string/],
      ['a nested map', 'a:\n  b: c\n', 1, /must be a string/],
      ['a list at the top', '- a\n', 1, /record/],
      ['a bad variable name', 'a: x\nbad-name: y\n', 2, /invalid key: must be a variable name/],
      ['__proto__', 'a: x\n__proto__: { isAdmin: "yes" }\n', 2, /__proto__/],
      ['constructor', 'constructor: x\n', 1, /invalid key: is a reserved name/],
      ['prototype', 'prototype: x\n', 1, /invalid key: is a reserved name/],
      ['a duplicate key', 'a: x\na: y\n', 2, /unique/i],
    ];
    for (const [title, text, line, message] of refused) {
      it(`refuses ${title} with HOST_FILE_INVALID (line ${line})`, () => {
        const error = thrown(() => parseHostVariables(text, FILE));
        expect(error.code).to.equal('HOST_FILE_INVALID');
        expect(error.problems[0]).to.include({ file: FILE, line });
        expect(error.problems[0]?.message).to.match(message);
        expect(({} as Record<string, unknown>)['isAdmin']).to.equal(undefined);
      });
    }
  });

  describe('loadRepo', () => {
    let root: string;
    beforeEach(async () => {
      root = await mkdtemp(join(tmpdir(), 'fleet-repo-'));
    });
    afterEach(async () => {
      await rm(root, { recursive: true, force: true });
    });

    async function put(path: string, text: string): Promise<void> {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    }

    it('loads a valid repository with its host variables', async () => {
      await put('fleet.yaml', MANIFEST);
      await put('hosts/alpha.yaml', 'node_id: alpha\n');
      await put('hosts/.hidden', 'ignored: "x"\n');
      const repo = await loadRepo(root);
      expect(repo.root).to.equal(root);
      expect(Object.keys(repo.manifest.hosts)).to.deep.equal(['alpha', 'beta']);
      expect([...repo.variables]).to.deep.equal([['alpha', { node_id: 'alpha' }]]);
      expect(repo.manifestLine(['hosts', 'beta', 'platform'])).to.equal(12);
      expect(repo.manifestLine(['hosts', 'beta', 'no-such-field'])).to.equal(9);
    });

    it('REPO_NOT_FOUND without a fleet.yaml', async () => {
      const error = await rejected(loadRepo(root));
      expect(error.code).to.equal('REPO_NOT_FOUND');
      expect(error.message).to.contain(root);
    });

    it('refuses a hosts file for an undeclared host, and a file not named <host>.yaml', async () => {
      await put('fleet.yaml', MANIFEST);
      await put('hosts/gamma.yaml', 'node_id: gamma\n');
      await put('hosts/notes.txt', 'hello');
      const error = await rejected(loadRepo(root));
      expect(error.code).to.equal('REPO_INVALID');
      expect(error.exitCode).to.equal(2);
      expect(error.problems).to.deep.equal([
        {
          file: 'hosts/gamma.yaml',
          message: 'host gamma is not declared under hosts: in fleet.yaml',
        },
        { file: 'hosts/notes.txt', message: 'host files are named <host>.yaml' },
      ]);
    });

    it('reports the problems of fleet.yaml and of every host file together', async () => {
      await put('fleet.yaml', edit('platform: linux', 'platform: beos'));
      await put('hosts/alpha.yaml', 'port: 7701\n');
      await put('hosts/beta.yaml', 'a: x\na: y\n');
      const error = await rejected(loadRepo(root));
      expect(error.code).to.equal('FLEET_YAML_INVALID');
      expect(error.message).to.contain('(3 problems)');
      expect(error.problems.map((p) => [p.file, p.line])).to.deep.equal([
        ['fleet.yaml', 6],
        ['hosts/alpha.yaml', 1],
        ['hosts/beta.yaml', 2],
      ]);
    });

    it('quotes the only problem in the message', async () => {
      await put('fleet.yaml', MANIFEST);
      await put('hosts/alpha.yaml', 'port: 7701\n');
      const error = await rejected(loadRepo(root));
      expect(error.code).to.equal('REPO_INVALID');
      expect(error.message).to.contain('(1 problem)').and.contain('must be a string');
    });
  });

  describe('hostEntry, hostVariables and readRepoFile', () => {
    let root: string;
    let repo: FleetRepo;
    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'fleet-repo-'));
      await writeFile(join(root, 'fleet.yaml'), MANIFEST);
      await mkdir(join(root, 'hosts'));
      await writeFile(join(root, 'hosts', 'alpha.yaml'), 'node_id: alpha\n');
      await mkdir(join(root, 'domains', 'router'), { recursive: true });
      await writeFile(join(root, 'domains', 'router', 'router.yaml'), 'a: 1\r\n');
      repo = await loadRepo(root);
    });
    after(async () => {
      await rm(root, { recursive: true, force: true });
    });

    it('returns a declared host and its variables ({} without a hosts file)', () => {
      expect(hostEntry(repo, 'beta').platform).to.equal('win32');
      expect(hostVariables(repo, 'alpha')).to.deep.equal({ node_id: 'alpha' });
      expect(hostVariables(repo, 'beta')).to.deep.equal({});
    });

    for (const lookup of [hostEntry, hostVariables]) {
      for (const name of ['gamma', 'constructor', '__proto__']) {
        it(`${lookup.name}(${JSON.stringify(name)}) is UNKNOWN_HOST (exit 2) listing the known hosts`, () => {
          const error = thrown(() => lookup(repo, name));
          expect(error.code).to.equal('UNKNOWN_HOST');
          expect(error.exitCode).to.equal(2);
          expect(error.message).to.contain(JSON.stringify(name)).and.contain('alpha, beta');
        });
      }
    }

    it('names the first ten declared hosts and how many more, not a whole fleet on one line', () => {
      const hosts = Object.fromEntries(
        Array.from({ length: 1000 }, (_, i) => [
          `node-${String(i + 1).padStart(4, '0')}`,
          { platform: 'linux' },
        ]),
      );
      const fleet = { ...repo, manifest: { ...repo.manifest, hosts } } as FleetRepo;
      const error = thrown(() => hostEntry(fleet, 'node-1001'));
      expect(error.code).to.equal('UNKNOWN_HOST');
      expect(error.suggestions).to.have.length(1);
      expect(error.suggestions[0]).to.match(/^did you mean node-\d{4}\?$/);
      expect(error.message).to.not.contain('did you mean'); // once, as the hint
      expect(error.message).to.contain(
        '(fleet.yaml declares: node-0001, node-0002, node-0003, node-0004, node-0005, node-0006, node-0007, node-0008, node-0009, node-0010, … and 990 more)',
      );
      expect(error.message.length).to.be.below(300);
    });

    it('readRepoFile reads a canonical file byte-exactly', () => {
      expect(readRepoFile(root, 'domains/router/router.yaml')).to.equal('a: 1\r\n');
    });

    it('readRepoFile says CANONICAL_MISSING naming the file', () => {
      const error = thrown(() => readRepoFile(root, 'domains/router/missing.yaml'));
      expect(error.code).to.equal('CANONICAL_MISSING');
      expect(error.exitCode).to.equal(2);
      expect(error.problems).to.deep.equal([
        { file: 'domains/router/missing.yaml', message: 'canonical file is missing' },
      ]);
    });

    it('readRepoFile refuses paths that leave the repository or enter .git', () => {
      for (const path of ['../outside', '/etc/passwd', '.git/config', 'domains/../../x']) {
        expect(thrown(() => readRepoFile(root, path)).code, path).to.equal('PATH_INVALID');
      }
    });
  });
});
