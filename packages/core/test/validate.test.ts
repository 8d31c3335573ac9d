import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import { loadRepo, readRepoFile } from '../src/repo/load.js';
import { readWorkingSource, type CanonicalSource } from '../src/repo/sources.js';
import { domainRuntime } from '../src/config/domain-runtime.js';
import type { FileTarget } from '../src/config/file-target.js';
import { targetsForHost } from '../src/config/targets.js';
import { fileInstaller } from '../src/installers/file-installer.js';
import { validateRepo, type ValidationReport } from '../src/validate.js';

// Line numbers matter: tests below point at them.
const MANIFEST = `apiVersion: fleet/v1
canonicalVersion: 1.0.0
hosts:
  alpha:
    controller: http://127.0.0.1:7701
    platform: linux
    supervisor: lab
    domains: [router, harness]
  beta:
    controller: http://127.0.0.1:7702
    platform: linux
    supervisor: lab
    domains: [router]
  gamma:
    controller: http://127.0.0.1:7703
    platform: linux
    supervisor: lab
domains:
  router: {}
`;

const ROUTER: DomainDeclaration = {
  domain: 'router',
  description: 'router',
  files: [
    {
      id: 'router.yaml',
      path: '~/.config/router/router.yaml',
      canonical: 'router.yaml',
      kind: 'whole',
      format: 'yaml',
    },
    {
      id: 'routes.yaml',
      path: '~/.config/router/routes.yaml',
      canonical: 'routes.yaml',
      kind: 'whole',
      format: 'yaml',
    },
  ],
  hostVariables: ['node_id', 'listen'],
  coupling: { kind: 'none' },
};

const HARNESS: DomainDeclaration = {
  domain: 'harness',
  description: 'harness',
  files: [
    {
      id: 'CLAUDE.md',
      path: '~/CLAUDE.md',
      canonical: 'CLAUDE.md',
      kind: 'whole',
      format: 'markdown',
    },
  ],
  hostVariables: ['node_id'],
  coupling: { kind: 'none' },
};

const DOMAINS = new Map([
  ['router', ROUTER],
  ['harness', HARNESS],
]);

/** Files of a repository in which everything renders for every host. */
const CLEAN: Record<string, string> = {
  'fleet.yaml': MANIFEST,
  'hosts/alpha.yaml': 'node_id: alpha\nlisten: "127.0.0.1:8080"\n',
  'hosts/beta.yaml': 'node_id: beta\nlisten: "127.0.0.1:8081"\n',
  'domains/router/router.yaml':
    'id: {{ host.node_id }}\nlisten: {{ host.listen }}\nkey: {{ secret.K }}\n',
  'domains/router/routes.yaml': 'routes: []\n',
  'domains/harness/CLAUDE.md': '# {{ host.node_id }}\n',
};

describe('validate', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-validate-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writes `CLEAN` with `changes` applied (`null` deletes a file), loads and validates it. */
  async function validate(
    changes: Record<string, string | null> = {},
    domains: ReadonlyMap<string, DomainDeclaration> = DOMAINS,
  ): Promise<ValidationReport> {
    for (const [path, text] of Object.entries({ ...CLEAN, ...changes })) {
      if (text === null) continue;
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const repo = await loadRepo(root);
    return validateRepo({ repo, domains, readCanonical: (path) => readRepoFile(root, path) });
  }

  it('a clean repository has no problems and counts every host × file rendering', async () => {
    const report = await validate();
    expect(report.problems).to.deep.equal([]);
    // alpha: router (2 files) + harness (1); beta: router (2); gamma: nothing
    expect(report).to.deep.include({ hosts: 3, domains: 2, rendered: 5 });
  });

  it('counts only the domains some host uses', async () => {
    const report = await validate({
      'fleet.yaml': MANIFEST.replace('[router, harness]', '[router]'),
    });
    expect(report).to.deep.include({ hosts: 3, domains: 1, rendered: 4, problems: [] });
  });

  describe('unknown domains', () => {
    it('in a host, with its field path and line, naming the registered domains', async () => {
      const report = await validate({
        'fleet.yaml': MANIFEST.replace('[router]', '[router, nope]'),
      });
      expect(report.problems).to.deep.equal([
        {
          file: 'fleet.yaml',
          line: 13,
          path: 'hosts.beta.domains[1]',
          message: 'unknown domain "nope" (registered: harness, router)',
        },
      ]);
      expect(report.rendered).to.equal(5);
    });

    it('under domains:, with its line', async () => {
      const report = await validate({
        'fleet.yaml': `${MANIFEST}  ghost: { unattended: allow }\n`,
      });
      expect(report.problems).to.deep.equal([
        {
          file: 'fleet.yaml',
          line: 20,
          path: 'domains.ghost',
          message: 'unknown domain "ghost" (registered: harness, router)',
        },
      ]);
    });

    it('with nothing registered, every used domain is unknown and nothing renders', async () => {
      const report = await validate({}, new Map());
      expect(report.rendered).to.equal(0);
      expect(report.domains).to.equal(0);
      expect(report.problems.map((p) => p.path)).to.deep.equal([
        'domains.router',
        'hosts.alpha.domains[0]',
        'hosts.alpha.domains[1]',
        'hosts.beta.domains[0]',
      ]);
      expect(report.problems[0]?.message).to.contain('(registered: none)');
    });
  });

  describe('render problems', () => {
    it('a broken canonical file is reported once, not once per host', async () => {
      const report = await validate({ 'domains/router/routes.yaml': 'a: 1\nb: {{ foo }}\n' });
      expect(report.problems).to.deep.equal([
        {
          file: 'domains/router/routes.yaml',
          line: 2,
          message:
            'unsupported placeholder {{ foo }}: only {{ host.NAME }} and {{ secret.NAME }} exist',
        },
      ]);
      expect(report.rendered).to.equal(3); // routes.yaml failed for alpha and beta
    });

    it('a missing variable is reported for each host that lacks it, naming its host file', async () => {
      const report = await validate({
        'hosts/alpha.yaml': 'node_id: alpha\n',
        'hosts/beta.yaml': 'node_id: beta\n',
      });
      expect(report.problems).to.deep.equal([
        {
          file: 'domains/router/router.yaml',
          line: 2,
          message: 'host variable listen is not set in hosts/alpha.yaml',
        },
        {
          file: 'domains/router/router.yaml',
          line: 2,
          message: 'host variable listen is not set in hosts/beta.yaml',
        },
      ]);
      expect(report.rendered).to.equal(3);
    });

    it('an undeclared variable names the file and line', async () => {
      const report = await validate({ 'domains/harness/CLAUDE.md': '# x\n\n{{ host.listen }}\n' });
      expect(report.problems).to.have.length(1);
      expect(report.problems[0]).to.include({ file: 'domains/harness/CLAUDE.md', line: 3 });
      expect(report.problems[0]?.message).to.contain('listen is not declared');
    });

    it('a missing canonical file is reported once', async () => {
      await mkdir(join(root, 'domains', 'router'), { recursive: true });
      const report = await validate({ 'domains/router/routes.yaml': null });
      expect(report.problems).to.deep.equal([
        { file: 'domains/router/routes.yaml', message: 'canonical file is missing' },
      ]);
      expect(report.rendered).to.equal(3);
    });

    it('reports schema-level and render-level problems together', async () => {
      const report = await validate({
        'fleet.yaml': MANIFEST.replace('[router]', '[router, nope]'),
        'domains/harness/CLAUDE.md': '{{ nope }}',
      });
      expect(report.problems.map((p) => p.file)).to.have.members([
        'fleet.yaml',
        'domains/harness/CLAUDE.md',
      ]);
    });
  });

  describe('a source that is not UTF-8 text (issue 38: validate says what drift would)', () => {
    // A repository-declared files domain (contract §10.4): one whole entry, one block entry.
    const FILES: DomainDeclaration = {
      domain: 'files',
      description: 'files',
      repoManifest: 'files.yaml',
      files: [
        { id: 'logo', path: '~/logo.bin', canonical: 'logo.bin', kind: 'whole', format: 'text' },
        {
          id: 'profile',
          path: '~/.profile',
          canonical: 'profile',
          kind: 'block',
          format: 'text',
          markers: { begin: '# BEGIN fleet', end: '# END fleet' },
        },
      ],
      hostVariables: [],
      coupling: { kind: 'none' },
    };
    const LATIN1 = Buffer.from('export NAME=caf\xe9\n', 'latin1');

    async function validateFiles(sources: Record<string, Buffer>): Promise<{
      report: ValidationReport;
      drift: FileTarget['desired'][];
    }> {
      const files = {
        ...CLEAN,
        'fleet.yaml': MANIFEST.replace('[router, harness]', '[files]'),
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(root, path)), { recursive: true });
        await writeFile(join(root, path), text);
      }
      await mkdir(join(root, 'domains', 'files'), { recursive: true });
      for (const [name, bytes] of Object.entries(sources)) {
        await writeFile(join(root, 'domains', 'files', name), bytes);
      }
      const repo = await loadRepo(root);
      const report = validateRepo({
        repo,
        domains: new Map([...DOMAINS, ['files', FILES]]),
        readCanonical: (path) => readWorkingSource(root, path).text,
        binaryReason: (path) => {
          const { source } = readWorkingSource(root, path);
          return 'binary' in source ? source.binary : undefined;
        },
      });
      // What drift, plan and install derive from the same bytes at a commit.
      const atRef = new Map<string, string | null>();
      const read = new Map<string, CanonicalSource>();
      for (const name of Object.keys(sources)) {
        const path = `domains/files/${name}`;
        const working = readWorkingSource(root, path);
        atRef.set(path, working.text);
        read.set(path, working.source);
      }
      const drift = targetsForHost(
        'alpha',
        {},
        [domainRuntime(FILES, fileInstaller({ domain: 'files' }))],
        { atRef, sources: read },
      ).map((target) => target.desired);
      return { report, drift };
    }

    it("a block entry's source is refused with drift's own message, before anything is written", async () => {
      const { report, drift } = await validateFiles({
        'logo.bin': Buffer.from('PNG\0\x01'),
        profile: LATIN1,
      });
      const message =
        "domains/files/profile is not valid UTF-8 (the first invalid byte is at offset 15): a block entry's source is its text body, so it must be UTF-8 (only a whole files entry copies a source byte for byte)";
      expect(report.problems).to.deep.equal([{ file: 'domains/files/profile', message }]);
      expect(drift[1]).to.deep.equal({
        ok: false,
        problem: { file: 'domains/files/profile', message },
      });
      // The whole entry's bytes are copied as they are: nothing to render, counted as checked.
      expect(drift[0]).to.include({ ok: true, encoding: 'base64' });
      expect(report.rendered).to.equal(3); // alpha's logo.bin; beta's two router files
    });

    it('a whole entry whose source is bytes validates (Ansible copy, chezmoi)', async () => {
      const { report } = await validateFiles({
        'logo.bin': LATIN1,
        profile: Buffer.from('export NAME=cafe\n'),
      });
      expect(report.problems).to.deep.equal([]);
      expect(report.rendered).to.equal(4); // alpha's two files; beta's two router files
    });
  });
});
