/**
 * The files installer on a fake host (testkit: a temporary home and the controller's real writer),
 * as the operator and the node call it: the operator half views a rendered source, the node half
 * writes it — whole, or as a block that keeps everything around it byte for byte.
 */
import { expect } from 'chai';
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

  it('without a manifest in the repository the domain manages nothing', () => {
    expect(withRepoFiles(filesDomain, filesInstaller, null, [router]).files).to.deep.equal([]);
  });
});
