/**
 * The files installer on a fake host (testkit: a temporary home and the controller's real writer),
 * as the operator and the node call it: the operator half views a rendered source, the node half
 * writes it — whole, or as a block that keeps everything around it byte for byte.
 */
import { expect } from 'chai';
import { chmod, stat } from 'node:fs/promises';
import {
  isFleetError,
  renderDomainForHost,
  withRepoFiles,
  type DomainDeclaration,
  type InstallFileRequest,
} from '@fleet/core';
import { createFakeHost, type FakeHost } from '@fleet/testkit';
import { filesDomain, filesInstaller } from '../src/index.js';

const MANIFEST = `hostVariables: [greeting]
files:
  - path: ~/.config/demo/hello.conf
    source: hello.conf
  - path: ~/.bashrc
    source: bashrc
    kind: block
    marker: '# {mark} fleet'
`;
const SOURCES: Record<string, string> = {
  'domains/files/hello.conf': 'greeting = {{ host.greeting }}\ntoken = {{ secret.API_TOKEN }}\n',
  'domains/files/bashrc': 'export EDITOR=vim\n',
};

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('files plugin: installer', () => {
  // The declaration as every verb sees it: the manifest's entries added by the core.
  const declaration: DomainDeclaration = withRepoFiles(filesDomain, filesInstaller, MANIFEST, []);
  let host: FakeHost;

  beforeEach(async () => {
    host = await createFakeHost({
      nodeId: 'node-01',
      secrets: { API_TOKEN: 'tok_canary_0123456789' },
    });
  });
  afterEach(() => host.dispose());

  /** What `fleet config plan` would send for one entry of this host. */
  function requestFor(path: string, expectedSha256: string | null): InstallFileRequest {
    const file = declaration.files.find((f) => f.path === path);
    if (!file) throw new Error(`no entry ${path}`);
    const rendered = renderDomainForHost(declaration, 'node-01', { greeting: 'hi' }, (p) => {
      const text = SOURCES[p];
      if (text === undefined) throw new Error(`no source ${p}`);
      return text;
    }).find((r) => r.file.id === file.id);
    const content = filesInstaller.view(file, rendered?.content ?? '', declaration);
    return {
      fileId: file.id,
      path,
      expectedSha256,
      content,
      ...(file.markers ? { markers: file.markers } : {}),
    };
  }

  async function install(files: InstallFileRequest[]) {
    const writer = host.writer(declaration);
    return filesInstaller.install(
      host,
      { operationId: '01JTESTOPERATION0000000000', domain: 'files', files, parameters: {} },
      writer,
    );
  }

  it('writes a whole entry: host variables rendered, the secret resolved on the node', async () => {
    const result = await install([requestFor('~/.config/demo/hello.conf', null)]);
    expect(result.verified).to.equal(true);
    expect(await host.readText('~/.config/demo/hello.conf')).to.equal(
      'greeting = hi\ntoken = tok_canary_0123456789\n',
    );
  });

  it("splices a block entry into the user's file, keeping every other byte", async () => {
    const mine = '# my prompt\r\nPS1=">"\r\n';
    await host.writeFile('~/.bashrc', mine);
    const live = await host.writer(declaration).read('~/.bashrc');
    await install([requestFor('~/.bashrc', live?.sha256 ?? null)]);
    const text = (await host.readText('~/.bashrc')) ?? '';
    expect(text).to.equal(`${mine}\r\n# BEGIN fleet\r\nexport EDITOR=vim\r\n# END fleet\r\n`);
    const file = declaration.files.find((f) => f.path === '~/.bashrc')!;
    expect(filesInstaller.managed(file, text)).to.equal('export EDITOR=vim\n');
  });

  it('refuses, writing nothing, when the file changed since the plan', async () => {
    await host.writeFile('~/.bashrc', 'one\n');
    const stale = requestFor('~/.bashrc', null);
    expect(await codeOf(() => install([stale]))).to.equal('PRECONDITION_FAILED');
    expect(await host.readText('~/.bashrc')).to.equal('one\n');
  });

  it('refuses damaged markers in the live file, writing nothing', async () => {
    await host.writeFile('~/.bashrc', '# BEGIN fleet (edited)\nx\n');
    const live = await host.writer(declaration).read('~/.bashrc');
    expect(await codeOf(() => install([requestFor('~/.bashrc', live?.sha256 ?? null)]))).to.equal(
      'MARKERS_UNPAIRED',
    );
    expect(await host.readText('~/.bashrc')).to.equal('# BEGIN fleet (edited)\nx\n');
  });

  it('refuses a block source that holds a marker line, on the operator side', () => {
    const file = declaration.files.find((f) => f.path === '~/.bashrc')!;
    const problems = filesInstaller.check?.(file, 'a\n# END fleet\n') ?? [];
    expect(problems).to.have.length(1);
  });

  // Ansible's `copy` writes a file's braces as they are, where `template` renders them; an entry
  // with `template: false` is a copy: no host variable rendered, no secret resolved on the node.
  it('template: false writes the content as it is, its {{ secret.NAME }} text too', async () => {
    const literal = 'set -g status-left "{{ session }}"\n# {{ secret.API_TOKEN }} is text here\n';
    const result = await install([
      {
        fileId: '~/.config/demo/hello.conf',
        path: '~/.config/demo/hello.conf',
        expectedSha256: null,
        content: literal,
        template: false,
      },
    ]);
    expect(result.verified).to.equal(true);
    expect(await host.readText('~/.config/demo/hello.conf')).to.equal(literal);
  });

  // Ansible's `copy` and chezmoi write a file's bytes as they are: a source that is not UTF-8
  // text travels as base64 (`encoding: base64`) and is written byte for byte, never re-encoded.
  it('copies a Latin-1 source byte for byte, as Ansible copy does (never U+FFFD)', async () => {
    const latin1 = Buffer.from('caf\xe9 {{ secret.API_TOKEN }}\n', 'latin1');
    await install([
      {
        fileId: '~/.config/demo/hello.conf',
        path: '~/.config/demo/hello.conf',
        expectedSha256: null,
        content: latin1.toString('base64'),
        encoding: 'base64',
      },
    ]);
    const written = await host.writer(declaration).read('~/.config/demo/hello.conf');
    expect(Buffer.from(written?.content ?? []).equals(latin1)).to.equal(true);
  });

  it('copies a binary (NUL-holding) source byte for byte, as chezmoi copies a file', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    const request = {
      fileId: '~/.config/demo/hello.conf',
      path: '~/.config/demo/hello.conf',
      expectedSha256: null,
      content: png.toString('base64'),
      encoding: 'base64' as const,
    };
    await install([request]);
    const written = await host.writer(declaration).read('~/.config/demo/hello.conf');
    expect(Buffer.from(written?.content ?? []).equals(png)).to.equal(true);
    // Again, against what it wrote: the same bytes, verified.
    const again = await install([{ ...request, expectedSha256: written?.sha256 ?? null }]);
    expect(again.verified).to.equal(true);
  });

  it('refuses bytes for a block entry: a block body is text', async () => {
    const request = requestFor('~/.bashrc', null);
    const bytes = {
      ...request,
      content: Buffer.from([0xe9]).toString('base64'),
      encoding: 'base64' as const,
    };
    expect(await codeOf(() => install([bytes]))).to.equal('BAD_REQUEST');
    expect(await host.readText('~/.bashrc')).to.equal(undefined);
  });

  it('refuses a missing secret before any write', async () => {
    await host.dispose();
    host = await createFakeHost({ nodeId: 'node-01' });
    expect(await codeOf(() => install([requestFor('~/.config/demo/hello.conf', null)]))).to.equal(
      'SECRET_MISSING',
    );
    expect(await host.readText('~/.config/demo/hello.conf')).to.equal(undefined);
  });

  it('refuses a request whose file id is not its path', async () => {
    const request = { ...requestFor('~/.config/demo/hello.conf', null), fileId: 'hello' };
    expect(await codeOf(() => install([request]))).to.equal('BAD_REQUEST');
  });

  describe('an entry with a mode (contract §10.4)', () => {
    const HELLO = '~/.config/demo/hello.conf';
    const modeOf = async (path: string) => (await stat(host.resolve(path))).mode & 0o7777;
    let umask: number;
    beforeEach(() => {
      umask = process.umask();
    });
    afterEach(() => {
      process.umask(umask);
    });

    it('creates a whole file with its mode, whatever the umask', async () => {
      process.umask(0o077); // would narrow a created 0644 to 0600
      await install([{ ...requestFor(HELLO, null), mode: '0644' }]);
      expect((await modeOf(HELLO)).toString(8)).to.equal('644');
      process.umask(0o000);
      const live = await host.writer(declaration).read(HELLO);
      const request = { ...requestFor(HELLO, live?.sha256 ?? null), mode: '0600' };
      await install([request]);
      expect((await modeOf(HELLO)).toString(8)).to.equal('600');
    });

    it('rewrites a file whose content is current but whose mode differs: backed up, not unchanged', async () => {
      await install([{ ...requestFor(HELLO, null), mode: '0600' }]);
      await chmod(host.resolve(HELLO), 0o644);
      const live = await host.writer(declaration).read(HELLO);
      const result = await install([{ ...requestFor(HELLO, live?.sha256 ?? null), mode: '0600' }]);
      expect(result.files[0]).to.include({ unchanged: false, afterSha256: live?.sha256 });
      expect(result.files[0]?.backupPath).to.be.a('string');
      expect((await modeOf(HELLO)).toString(8)).to.equal('600');
      // The same content and mode again: nothing to do.
      const again = await install([{ ...requestFor(HELLO, live?.sha256 ?? null), mode: '0600' }]);
      expect(again.files[0]).to.include({ unchanged: true });
    });

    it("gives a block file its mode only when it creates the file: the user's file keeps its own", async () => {
      process.umask(0o077);
      await install([{ ...requestFor('~/.bashrc', null), mode: '0644' }]);
      expect((await modeOf('~/.bashrc')).toString(8)).to.equal('644');
      await host.writeFile('~/.bashrc', 'mine\n');
      await chmod(host.resolve('~/.bashrc'), 0o600);
      const live = await host.writer(declaration).read('~/.bashrc');
      await install([{ ...requestFor('~/.bashrc', live?.sha256 ?? null), mode: '0644' }]);
      expect(await host.readText('~/.bashrc')).to.contain('export EDITOR=vim');
      expect((await modeOf('~/.bashrc')).toString(8)).to.equal('600');
    });
  });

  describe("an entry's coupled action (contract §10.4, §5.1)", () => {
    const HELLO = '~/.config/demo/hello.conf';
    /**
     * A node policy naming one action; the fake host's processes answer it with `exitCode` (the
     * real script through a real controller: test/e2e/files.test.ts). Returns the runs so far.
     */
    async function hostWithAction(exitCode: number): Promise<{ runs: () => number }> {
      const program = '/usr/local/bin/demo-reload';
      await host.setPolicy({
        domains: {
          files: {
            patterns: ['~/.config/demo/**', '~/.bashrc'],
            actions: { 'demo-reload': { argv: [program], timeoutSeconds: 5 } },
          },
        },
      });
      host.processes.on(program, { exitCode });
      return { runs: () => host.actionRuns.length };
    }
    const installAs = (files: InstallFileRequest[]) =>
      filesInstaller.install(
        host.forDomain('files'),
        { operationId: '01JTESTOPERATION0000000000', domain: 'files', files, parameters: {} },
        host.writer(declaration),
      );

    it('runs the action once after a write that changed the file, never for an unchanged one', async () => {
      const { runs } = await hostWithAction(0);
      const result = await installAs([{ ...requestFor(HELLO, null), action: 'demo-reload' }]);
      expect(result.actions).to.have.length(1);
      expect(result.actions[0]).to.include({ kind: 'demo-reload', status: 'ok' });
      expect(runs()).to.equal(1);
      const live = await host.writer(declaration).read(HELLO);
      const again = await installAs([
        { ...requestFor(HELLO, live?.sha256 ?? null), action: 'demo-reload' },
      ]);
      expect(again.actions[0]).to.include({ kind: 'demo-reload', status: 'skipped' });
      expect(runs()).to.equal(1);
      expect(host.actionRuns.map((run) => [run.id, run.exitCode])).to.deep.equal([
        ['demo-reload', 0],
      ]);
    });

    it('restores the file when the action fails (ACTION_FAILED), and runs it again on the restored file', async () => {
      const { runs } = await hostWithAction(3);
      await host.writeFile(HELLO, 'before\n');
      const live = await host.writer(declaration).read(HELLO);
      let failure: unknown;
      await installAs([
        { ...requestFor(HELLO, live?.sha256 ?? null), action: 'demo-reload' },
      ]).catch((error: unknown) => {
        failure = error;
      });
      expect(isFleetError(failure) && failure.code).to.equal('ACTION_FAILED');
      expect(isFleetError(failure) && failure.exitCode).to.equal(6);
      expect(await host.readText(HELLO)).to.equal('before\n');
      expect(runs()).to.equal(2);
    });

    it('refuses an action id the node policy does not define (POLICY_REFUSED), writing nothing', async () => {
      const { runs } = await hostWithAction(0);
      const code = await codeOf(() =>
        installAs([{ ...requestFor(HELLO, null), action: 'not-in-policy' }]),
      );
      expect(code).to.equal('POLICY_REFUSED');
      expect(await host.exists(HELLO)).to.equal(false);
      expect(runs()).to.equal(0);
    });
  });
});

describe('files plugin: the core adds the entries, never over another domain', () => {
  const router: DomainDeclaration = {
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
    ],
    hostVariables: [],
    coupling: { kind: 'none' },
  };

  it('refuses an entry whose path another domain owns (FILES_PATH_OWNED)', () => {
    const manifest = 'files:\n  - path: ~/.config/router/router.yaml\n    source: r\n';
    try {
      withRepoFiles(filesDomain, filesInstaller, manifest, [router, filesDomain]);
      expect.fail('accepted');
    } catch (error) {
      if (!isFleetError(error)) throw error;
      expect(error.code).to.equal('FILES_PATH_OWNED');
      expect(error.message).to.contain('~/.config/router/router.yaml is a path of domain router');
    }
  });

  // chezmoi refuses a source state whose targets overlap before it writes anything; a files entry
  // that is the same file as another domain's (case aside), or a directory above or below one.
  const overlapping: { path: string; says: string }[] = [
    { path: '~/.config/Router/router.yaml', says: 'is a path of domain router' },
    { path: '~/.config/router', says: 'is a directory above ~/.config/router/router.yaml' },
    { path: '~/.config/router/router.yaml/x', says: 'is inside ~/.config/router/router.yaml' },
  ];
  for (const { path, says } of overlapping) {
    it(`refuses ${path}, which overlaps the router's file (FILES_PATH_OWNED)`, () => {
      const manifest = `files:\n  - path: ${path}\n    source: r\n`;
      try {
        withRepoFiles(filesDomain, filesInstaller, manifest, [router, filesDomain]);
        expect.fail('accepted');
      } catch (error) {
        if (!isFleetError(error)) throw error;
        expect(error.code).to.equal('FILES_PATH_OWNED');
        expect(error.message).to.contain(`${path} ${says}`);
      }
    });
  }
  it("refuses an entry that is another domain's path in another case or a fullwidth spelling", () => {
    for (const path of ['~/.config/Router/router.yaml', '~/.config/\uFF52outer/router.yaml']) {
      const manifest = `files:\n  - path: ${path}\n    source: r\n`;
      try {
        withRepoFiles(filesDomain, filesInstaller, manifest, [router, filesDomain]);
        expect.fail(`accepted ${path}`);
      } catch (error) {
        if (!isFleetError(error)) throw error;
        expect(error.code, path).to.equal('FILES_PATH_OWNED');
        expect(error.message).to.contain('is a path of domain router');
      }
    }
  });

  it('without a manifest in the repository the domain manages nothing', () => {
    expect(withRepoFiles(filesDomain, filesInstaller, null, [router]).files).to.deep.equal([]);
  });
});
