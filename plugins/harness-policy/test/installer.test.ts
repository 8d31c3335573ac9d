/**
 * The harness-policy installer against a fake host (contract §8.4, §10.3; catalogue 40, 43, 55, 58).
 *
 * The operator half is loaded through the registry exactly as the CLI loads it. The node half runs
 * against `@fleet/testkit`'s fake host (a real temporary home) with `host.writer(domain)`: the
 * controller's own writer (compare-and-swap, backups, atomic writes, restore) over that home.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { expect } from 'chai';
import {
  isFleetError,
  type ErrorCode,
  type Installer,
  type ManagedFile,
  type NodeInstallRequest,
  type SafeFileWriter,
} from '@fleet/core';
import {
  createFakeHost,
  registryFromHooks,
  type FakeHost,
  type TempHomeWriter,
} from '@fleet/testkit';
import { findBlock } from '../src/block.js';
import { harnessPolicyDomain, POLICY_MARKERS } from '../src/domain.js';
import register from '../src/register.js';

/** The writer without `read`, as a controller predating `SafeFileWriter.read` hands it out. */
function withoutRead(writer: SafeFileWriter): SafeFileWriter {
  // The interface now requires `read`; a controller built against an older @fleet/core may still
  // hand out a writer without it, which is what this stands for.
  const old: Omit<SafeFileWriter, 'read'> = {
    replace: (r) => writer.replace(r),
    restore: (r) => writer.restore(r),
  };
  return old as SafeFileWriter;
}

const plugin = { name: '@fleet/plugin-harness-policy', version: '0.1.0', type: 'core' };
const B = POLICY_MARKERS.begin;
const E = POLICY_MARKERS.end;
const BOM = '\ufeff';
const CLAUDE = '~/.claude/CLAUDE.md';
const AGENTS = '~/.codex/AGENTS.md';
const GEMINI = '~/.gemini/GEMINI.md';

/** A canonical CLAUDE.md, rendered: text for Claude only, then the shared policy section. */
const canonical = (rules: string): string =>
  `# Agent policy\n\nFor Claude only.\n\n${B}\n## Policy\n\n${rules}${E}\n`;

const sha256 = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');
const fileById = (id: string): ManagedFile =>
  harnessPolicyDomain.files.find((f) => f.id === id) as ManagedFile;

async function loadInstaller(): Promise<Installer> {
  return (await registryFromHooks([{ plugin, hook: register }])).installer('harness-policy');
}

/** What the operator sends: each file's view of the canonical and the live sha256 it planned against. */
async function plan(
  host: FakeHost,
  installer: Installer,
  rendered: string,
  ids: readonly string[] = ['CLAUDE.md', 'AGENTS.md', 'GEMINI.md'],
): Promise<NodeInstallRequest> {
  const files = await Promise.all(
    ids.map(async (id) => {
      const file = fileById(id);
      const live = await host.readFile(file.path);
      return {
        fileId: id,
        path: file.path,
        expectedSha256: live === undefined ? null : sha256(live),
        content: installer.view(file, rendered, harnessPolicyDomain),
      };
    }),
  );
  return {
    operationId: '01J0000000000000000000TEST',
    domain: 'harness-policy',
    files,
    parameters: {},
  };
}

async function shaOf(host: FakeHost, path: string): Promise<string | null> {
  const bytes = await host.readFile(path);
  return bytes === undefined ? null : sha256(bytes);
}

async function backups(host: FakeHost): Promise<string[]> {
  try {
    return await readdir(host.resolve('~/.local/state/fleet/backups/harness-policy'));
  } catch {
    return [];
  }
}

async function failure(promise: Promise<unknown>): Promise<{ code: ErrorCode; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isFleetError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the install to be refused');
}

describe('harness-policy installer: operator half', () => {
  let installer: Installer;
  before(async () => {
    installer = await loadInstaller();
  });

  it('views CLAUDE.md whole and the block files as the canonical policy section', () => {
    const rendered = canonical('- rule one\n');
    expect(installer.view(fileById('CLAUDE.md'), rendered, harnessPolicyDomain)).to.equal(rendered);
    for (const id of ['AGENTS.md', 'GEMINI.md']) {
      expect(installer.view(fileById(id), rendered, harnessPolicyDomain)).to.equal(
        '## Policy\n\n- rule one\n',
      );
    }
    // A canonical without markers is its own section.
    expect(installer.view(fileById('AGENTS.md'), '- only\n', harnessPolicyDomain)).to.equal(
      '- only\n',
    );
  });

  it('reads the managed part of a live file: whole, the block body, or null without a block', () => {
    expect(installer.managed(fileById('CLAUDE.md'), 'anything\n')).to.equal('anything\n');
    expect(installer.managed(fileById('AGENTS.md'), `mine\r\n${B}\r\n- r\r\n${E}\r\n`)).to.equal(
      '- r\n',
    );
    expect(installer.managed(fileById('AGENTS.md'), 'mine, no block\n')).to.equal(null);
  });

  it('throws for a live file with damaged markers: such a file is never planned for writing', () => {
    expect(() => installer.managed(fileById('GEMINI.md'), `${B}\nx\n`))
      .to.throw()
      .with.property('code', 'MARKERS_UNPAIRED');
  });

  it('check() refuses a canonical whose markers are damaged or whose section holds a marker', () => {
    const check = installer.check?.bind(installer);
    expect(check, 'the installer declares check').to.be.a('function');
    expect(check!(fileById('AGENTS.md'), canonical('- fine\n'))).to.deep.equal([]);
    expect(check!(fileById('AGENTS.md'), `${B}\n- open\n`)).to.have.length(1);
    expect(check!(fileById('CLAUDE.md'), `${E}\n${B}\n`)).to.have.length.greaterThan(0);
    expect(check!(fileById('GEMINI.md'), `- quoting ${B} in prose\n`)).to.have.length(1);
  });

  it('after an install, live and desired compare equal in template space (drift: current)', async () => {
    const host = await createFakeHost();
    try {
      await host.writeFile(AGENTS, `# Codex, CRLF\r\n`);
      const rendered = canonical('- rule one\n');
      await installer.install(
        host,
        await plan(host, installer, rendered),
        host.writer(harnessPolicyDomain),
      );
      for (const id of ['CLAUDE.md', 'AGENTS.md', 'GEMINI.md']) {
        const file = fileById(id);
        const live = (await host.readText(file.path)) as string;
        expect(installer.managed(file, live), id).to.equal(
          installer.view(file, rendered, harnessPolicyDomain),
        );
      }
    } finally {
      await host.dispose();
    }
  });
});

describe('harness-policy installer: node half', () => {
  let host: FakeHost;
  let installer: Installer;
  let writer: TempHomeWriter;
  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01' });
    installer = await loadInstaller();
    writer = host.writer(harnessPolicyDomain);
  });
  afterEach(() => host.dispose());

  it('writes CLAUDE.md whole, creates a missing AGENTS.md as just the block, and appends a missing block after one blank line', async () => {
    await host.writeFile(GEMINI, '# Gemini notes\nmine, no final newline');
    const rendered = canonical('- rule one\n');
    const result = await installer.install(host, await plan(host, installer, rendered), writer);

    expect(result.verified).to.equal(true);
    expect(result.actions).to.deep.equal([]);
    expect(await host.readText(CLAUDE)).to.equal(rendered);
    expect(await host.readText(AGENTS)).to.equal(`${B}\n## Policy\n\n- rule one\n${E}\n`);
    expect(await host.readText(GEMINI)).to.equal(
      `# Gemini notes\nmine, no final newline\n\n${B}\n## Policy\n\n- rule one\n${E}\n`,
    );
    expect(result.files.map((f) => [f.path, f.beforeSha256 === null, f.unchanged])).to.deep.equal([
      [CLAUDE, true, false],
      [AGENTS, true, false],
      [GEMINI, false, false],
    ]);
    expect(await backups(host)).to.have.length(1); // GEMINI.md existed, so it was backed up
  });

  it('preserves every byte outside the markers across three installs (BOM, CRLF, text after, no final newline)', async () => {
    const before = `${BOM}# Codex notes\r\n\r\nmine\r\n\r\n${B}\r\nold policy\r\n${E}\r\n\r\nafter the block, no final newline`;
    await host.writeFile(AGENTS, before);
    const outsideOf = (bytes: Buffer): string[] => {
      const block = findBlock(bytes.toString('utf8'));
      if (block === null) throw new Error('block lost');
      return [
        sha256(Buffer.from(block.prefix + block.begin)),
        sha256(Buffer.from(block.end + block.suffix)),
      ];
    };
    const expectedOutside = outsideOf(Buffer.from(before));

    const runs = [canonical('- v1\n'), canonical('- v2\n- added\n'), canonical('- v2\n- added\n')];
    const results = [];
    for (const rendered of runs) {
      const inode = (await stat(host.resolve(AGENTS))).ino;
      const mtime = (await stat(host.resolve(AGENTS))).mtimeMs;
      const result = await installer.install(
        host,
        await plan(host, installer, rendered, ['AGENTS.md']),
        writer,
      );
      const after = (await host.readFile(AGENTS)) as Buffer;
      expect(outsideOf(after)).to.deep.equal(expectedOutside);
      expect(after.subarray(0, 3)).to.deep.equal(Buffer.from([0xef, 0xbb, 0xbf])); // the BOM, still first
      results.push({ result, inode, mtime });
    }

    expect(await host.readText(AGENTS)).to.equal(
      `${BOM}# Codex notes\r\n\r\nmine\r\n\r\n${B}\r\n## Policy\r\n\r\n- v2\r\n- added\r\n${E}\r\n\r\nafter the block, no final newline`,
    );
    // The third run had nothing to do: no write, no backup, same inode and mtime (catalogue 58).
    const third = results[2]!;
    expect(third.result.files[0]?.unchanged).to.equal(true);
    expect(third.result.files[0]?.backupPath).to.equal(null);
    expect((await stat(host.resolve(AGENTS))).ino).to.equal(third.inode);
    expect((await stat(host.resolve(AGENTS))).mtimeMs).to.equal(third.mtime);
    expect(await backups(host)).to.have.length(2);
  });

  const damaged: { name: string; live: string; code: ErrorCode }[] = [
    { name: 'END missing', live: `mine\n${B}\nold\n`, code: 'MARKERS_UNPAIRED' },
    { name: 'BEGIN missing', live: `mine\nold\n${E}\n`, code: 'MARKERS_UNPAIRED' },
    { name: 'two BEGINs and one END', live: `${B}\n${B}\nold\n${E}\n`, code: 'MARKERS_DUPLICATE' },
    { name: 'END before BEGIN', live: `${E}\nkeep me\n${B}\n`, code: 'MARKERS_REVERSED' },
    {
      name: 'a marker with trailing whitespace',
      live: `${B}  \nold\n${E}\n`,
      code: 'MARKERS_UNPAIRED',
    },
    { name: 'an indented marker', live: `${B}\nold\n\t${E}\n`, code: 'MARKERS_UNPAIRED' },
    {
      name: 'CRLF on marker lines only',
      live: `mine\n${B}\r\nold\n${E}\r\n`,
      code: 'MARKERS_UNPAIRED',
    },
  ];
  for (const { name, live, code } of damaged) {
    it(`refuses ${name} with ${code}: no file of the request written, no backup`, async () => {
      await host.writeFile(GEMINI, live);
      const liveSha = await shaOf(host, GEMINI);
      const request = await plan(host, installer, canonical('- new\n'));

      expect(await failure(installer.install(host, request, writer))).to.include({ code });
      expect(await shaOf(host, GEMINI)).to.equal(liveSha);
      expect(await host.exists(CLAUDE)).to.equal(false); // refused before the first write
      expect(await host.exists(AGENTS)).to.equal(false);
      expect(await backups(host)).to.deep.equal([]);
    });
  }

  it('refuses a live file changed since the plan (PRECONDITION_FAILED), writing nothing', async () => {
    await host.writeFile(AGENTS, 'mine\n');
    const request = await plan(host, installer, canonical('- new\n'), ['CLAUDE.md', 'AGENTS.md']);
    await host.writeFile(AGENTS, 'mine, edited after the plan\n');
    const edited = await shaOf(host, AGENTS);

    expect(await failure(installer.install(host, request, writer))).to.include({
      code: 'PRECONDITION_FAILED',
    });
    expect(await shaOf(host, AGENTS)).to.equal(edited);
    expect(await host.exists(CLAUDE)).to.equal(false);
    expect(await backups(host)).to.deep.equal([]);
  });

  it('refuses a block file that appeared since a plan that expected none', async () => {
    const request = await plan(host, installer, canonical('- new\n'), ['GEMINI.md']);
    await host.writeFile(GEMINI, 'created meanwhile\n');
    expect(await failure(installer.install(host, request, writer))).to.include({
      code: 'PRECONDITION_FAILED',
    });
    expect(await host.readText(GEMINI)).to.equal('created meanwhile\n');
  });

  it('resolves secret placeholders on the node from the env-file chain, and returns no value', async () => {
    const canary = 'canary-9f3b2c71d0e84a56';
    await host.writeEnvFile('.config/fleet/env', { POLICY_TOKEN: 'overridden-value' });
    await host.writeEnvFile('20-policy.env', { POLICY_TOKEN: canary }); // env.d overrides env
    await host.writeFile(AGENTS, 'mine\n');
    const rendered = canonical('- token: {{ secret.POLICY_TOKEN }}\n');
    const request = await plan(host, installer, rendered);
    expect(JSON.stringify(request)).not.to.contain(canary); // the wire carries the name only

    const result = await installer.install(host, request, writer);
    expect(await host.readText(CLAUDE)).to.contain(`- token: ${canary}\n`);
    expect(await host.readText(AGENTS)).to.equal(
      `mine\n\n${B}\n## Policy\n\n- token: ${canary}\n${E}\n`,
    );
    expect(JSON.stringify(result)).not.to.contain(canary);
    expect(JSON.stringify(result)).not.to.contain('overridden-value');
  });

  it('fails a missing secret before any write (SECRET_MISSING names the name, not values)', async () => {
    await host.writeEnvFile('.config/fleet/env', { OTHER: 'canary-0000' });
    const request = await plan(host, installer, canonical('- {{ secret.POLICY_TOKEN }}\n'));
    const refused = await failure(installer.install(host, request, writer));
    expect(refused.code).to.equal('SECRET_MISSING');
    expect(refused.message).to.contain('POLICY_TOKEN').and.not.contain('canary-0000');
    expect(await host.exists(CLAUDE)).to.equal(false);
  });

  it('restores the files already written when a later file of the request fails', async () => {
    await host.writeFile(CLAUDE, 'old claude\n');
    const failing = host.writer(harnessPolicyDomain, { failReplaceOf: GEMINI });
    const request = await plan(host, installer, canonical('- new\n'));

    expect(await failure(installer.install(host, request, failing))).to.include({
      code: 'IO_ERROR',
    });
    expect(await host.readText(CLAUDE)).to.equal('old claude\n'); // put back from its backup
    expect(await host.exists(AGENTS)).to.equal(false); // created, then removed
  });

  it('refuses a block install when the writer cannot read (DOMAIN_BEHAVIOUR_ABSENT), writing nothing', async () => {
    const request = await plan(host, installer, canonical('- new\n'));
    const refused = await failure(installer.install(host, request, withoutRead(writer)));
    expect(refused.code).to.equal('DOMAIN_BEHAVIOUR_ABSENT');
    expect(await host.exists(CLAUDE)).to.equal(false);
  });

  it('still installs CLAUDE.md alone through a writer that cannot read', async () => {
    const reader: SafeFileWriter = withoutRead(writer);
    const result = await installer.install(
      host,
      await plan(host, installer, canonical('- r\n'), ['CLAUDE.md']),
      reader,
    );
    expect(result.verified).to.equal(true);
    expect(await host.readText(CLAUDE)).to.equal(canonical('- r\n'));
  });

  it('refuses a block file that is not UTF-8 (ENCODING_INVALID) rather than mangling its bytes', async () => {
    for (const bytes of [
      Buffer.from([0xff, 0xfe, 0x23, 0x00]),
      Buffer.from('caf\xe9\n', 'latin1'),
    ]) {
      await host.writeFile(AGENTS, bytes);
      const request = await plan(host, installer, canonical('- new\n'), ['AGENTS.md']);
      expect(await failure(installer.install(host, request, writer))).to.include({
        code: 'ENCODING_INVALID',
      });
      expect(await host.readFile(AGENTS)).to.deep.equal(bytes);
    }
  });

  it('refuses a request for another domain, an undeclared file or a file twice (BAD_REQUEST)', async () => {
    const request = await plan(host, installer, canonical('- new\n'), ['CLAUDE.md']);
    expect(
      await failure(installer.install(host, { ...request, domain: 'router' }, writer)),
    ).to.include({ code: 'BAD_REQUEST' });
    const stray = { ...request, files: [{ ...request.files[0]!, fileId: 'notes.md' }] };
    expect(await failure(installer.install(host, stray, writer))).to.include({
      code: 'BAD_REQUEST',
    });
    const twice = { ...request, files: [request.files[0]!, request.files[0]!] };
    expect(await failure(installer.install(host, twice, writer))).to.include({
      code: 'BAD_REQUEST',
    });
    expect(await host.exists(CLAUDE)).to.equal(false);
  });
});
