import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { isFleetError, renderDomainForHost, type NodeInstallRequest } from '@fleet/core';
import { createFakeHost, type FakeHost } from '@fleet/testkit';
import { createGitconfigInstaller, gitconfigDomain } from '../src/index.js';

const PATH = '~/.gitconfig';
const FILE = gitconfigDomain.files[0];
const VARIABLES = { git_name: 'Ops Team', git_email: 'ops@example.org' };
const CANONICAL = `[user]
\tname = {{ host.git_name }}
\temail = {{ host.git_email }}
[url "https://x-access-token:{{ secret.GH_TOKEN }}@github.com/"]
\tinsteadOf = https://github.com/
`;
const USER_TEXT = '# my own settings\r\n[core]\r\n\teditor = vim\r\n[alias]\r\n\tst = status'; // CRLF, no final newline

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('gitconfig plugin: installer', () => {
  const installer = createGitconfigInstaller();
  let host: FakeHost;

  beforeEach(async () => {
    host = await createFakeHost({
      nodeId: 'node-01',
      secrets: { GH_TOKEN: 'ghp_canary0123456789' },
    });
  });
  afterEach(() => host.dispose());

  /** The operator half, as `fleet config plan` computes it: the host's desired block body. */
  function desiredFor(
    canonical = CANONICAL,
    variables: Record<string, string> = VARIABLES,
  ): string {
    const [rendered] = renderDomainForHost(gitconfigDomain, 'node-01', variables, () => canonical);
    return installer.view(FILE, rendered?.content ?? '', gitconfigDomain);
  }

  /** The node half, as the controller calls it, planned against the live file as it is now. */
  async function install(content: string, writer = host.writer(gitconfigDomain)) {
    const live = await writer.read(PATH);
    const request: NodeInstallRequest = {
      operationId: '01JTESTOPERATION0000000000',
      domain: 'gitconfig',
      files: [{ fileId: 'gitconfig', path: PATH, expectedSha256: live?.sha256 ?? null, content }],
      parameters: {},
    };
    return { writer, result: await installer.install(host, request, writer) };
  }

  it('renders host variables into the view and keeps secrets as names', () => {
    const view = desiredFor();
    expect(view).to.contain('\temail = ops@example.org\n');
    expect(view).to.contain('{{ secret.GH_TOKEN }}');
  });

  it('creates ~/.gitconfig when it is missing, with the secret resolved on the node', async () => {
    const { result } = await install(desiredFor());
    expect(result.verified).to.equal(true);
    expect(result.actions).to.deep.equal([]);
    const text = (await host.readText(PATH)) ?? '';
    expect(text.startsWith('# fleet:gitconfig:begin\n[user]\n')).to.equal(true);
    expect(text).to.contain('x-access-token:ghp_canary0123456789@github.com');
    expect(text.endsWith('# fleet:gitconfig:end\n')).to.equal(true);
  });

  it("preserves the user's own text byte for byte, in its own line endings", async () => {
    await host.writeFile(PATH, USER_TEXT);
    await install(desiredFor());
    const text = (await host.readText(PATH)) ?? '';
    expect(text.startsWith(`${USER_TEXT}\r\n\r\n# fleet:gitconfig:begin\r\n`)).to.equal(true);
    expect(text).to.not.match(/[^\r]\n/); // every line of the block written CRLF, like the file
  });

  it('reads back as current: managed(live) equals the view (CRLF aside, secrets redacted)', async () => {
    await host.writeFile(PATH, USER_TEXT);
    await install(desiredFor());
    const live = ((await host.readText(PATH)) ?? '').replace(
      'ghp_canary0123456789',
      '{{ secret.GH_TOKEN }}',
    );
    expect(installer.managed(FILE, live)).to.equal(desiredFor());
  });

  it('a second install of the same content writes nothing (unchanged, no backup)', async () => {
    await host.writeFile(PATH, USER_TEXT);
    await install(desiredFor());
    const { result } = await install(desiredFor());
    expect(result.files.map((f) => [f.unchanged, f.backupPath])).to.deep.equal([[true, null]]);
  });

  it('replaces only the block of an existing one, keeping a backup of the old bytes', async () => {
    await host.writeFile(PATH, USER_TEXT);
    await install(desiredFor());
    const before = (await host.readFile(PATH)) as Buffer;
    const { result } = await install(
      desiredFor(CANONICAL, { ...VARIABLES, git_email: 'new@example.org' }),
    );
    const [written] = result.files;
    expect(written?.beforeSha256).to.equal(sha256(before));
    expect(await host.readFile(written?.backupPath ?? '~/none')).to.deep.equal(before);
    const text = (await host.readText(PATH)) ?? '';
    expect(text).to.contain('email = new@example.org').and.not.contain('ops@example.org');
    expect(text.startsWith(USER_TEXT)).to.equal(true);
  });

  it('refuses, writing nothing, when the file changed since the plan', async () => {
    await host.writeFile(PATH, USER_TEXT);
    const writer = host.writer(gitconfigDomain);
    const request: NodeInstallRequest = {
      operationId: '01JTESTOPERATION0000000001',
      domain: 'gitconfig',
      files: [
        {
          fileId: 'gitconfig',
          path: PATH,
          expectedSha256: sha256('something else'),
          content: desiredFor(),
        },
      ],
      parameters: {},
    };
    expect(await codeOf(() => installer.install(host, request, writer))).to.equal(
      'PRECONDITION_FAILED',
    );
    expect(await host.readText(PATH)).to.equal(USER_TEXT);
    expect(writer.results).to.deep.equal([]);
  });

  it('refuses a missing secret before any write', async () => {
    await host.writeFile(PATH, USER_TEXT);
    await host.writeEnvFile('.config/fleet/env', {});
    expect(await codeOf(() => install(desiredFor()))).to.equal('SECRET_MISSING');
    expect(await host.readText(PATH)).to.equal(USER_TEXT);
  });

  it('refuses damaged markers in the live file, writing nothing', async () => {
    const damaged = `${USER_TEXT}\r\n# fleet:gitconfig:begin\r\n[user]\r\n`;
    await host.writeFile(PATH, damaged);
    expect(await codeOf(() => install(desiredFor()))).to.equal('MARKERS_UNPAIRED');
    expect(await host.readText(PATH)).to.equal(damaged);
  });

  it('refuses a canonical that is not git-config syntax, on both halves', async () => {
    const orphan = 'email = {{ host.git_email }}\n[core]\n\teditor = vim\n';
    // The operator half: `check` refuses the view, so drift shows an `error` item, nothing sent.
    const problems = installer.check?.(FILE, desiredFor(orphan)) ?? [];
    expect(problems).to.have.length(1);
    expect(problems[0]).to.deep.include({ line: 1 });
    expect(problems[0]?.message).to.match(/a setting before any \[section\] header/);
    // A request that bypassed the operator half is refused by the node too.
    expect(await codeOf(() => install('not = [config\n'))).to.equal('RENDER_FAILED');
    expect(await host.exists(PATH)).to.equal(false);
  });

  it('installs nothing but its own declared file', async () => {
    const writer = host.writer(gitconfigDomain);
    const request: NodeInstallRequest = {
      operationId: '01JTESTOPERATION0000000002',
      domain: 'gitconfig',
      files: [
        { fileId: 'gitconfig', path: '~/.bashrc', expectedSha256: null, content: desiredFor() },
      ],
      parameters: {},
    };
    // Not a path the node accepts for this domain: neither declared nor in its node policy. The
    // writer refuses it (as the controller's does) before anything is read or written.
    expect(await codeOf(() => installer.install(host, request, writer))).to.equal('POLICY_REFUSED');
    expect(await host.exists('~/.bashrc')).to.equal(false);
    const unknown = { ...request, files: [{ ...request.files[0]!, fileId: 'bashrc' }] };
    expect(await codeOf(() => installer.install(host, unknown, writer))).to.equal('BAD_REQUEST');
  });

  it('restores the file when the write cannot be verified', async () => {
    await host.writeFile(PATH, USER_TEXT);
    const writer = host.writer(gitconfigDomain);
    // A writer whose read-back lies after the replace (a disk that did not keep the write).
    let replaced = false;
    const lying = {
      read: async (path: string) => {
        const live = await writer.read(path);
        return replaced && live ? { ...live, sha256: sha256('corrupt') } : live;
      },
      replace: async (request: Parameters<typeof writer.replace>[0]) => {
        const result = await writer.replace(request);
        replaced = true;
        return result;
      },
      restore: (result: Parameters<typeof writer.restore>[0]) => writer.restore(result),
    };
    expect(await codeOf(() => install(desiredFor(), lying as typeof writer))).to.equal(
      'VERIFICATION_FAILED',
    );
    expect(writer.restored).to.have.length(1);
    expect(await host.readText(PATH)).to.equal(USER_TEXT);
  });
});
