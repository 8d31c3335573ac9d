/**
 * `host.writer(...)` is the controller's own writer, not a look-alike: its backups, journal and
 * parent-directory checks are the controller's. And the `RecordedSupervisor` seam fake.
 */
import { expect } from 'chai';
import { mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { isFleetError, type DomainDeclaration } from '@fleet/core';
import { RecordedSupervisor, createFakeHost, type FakeHost } from '../src/index.js';

const domain: DomainDeclaration = {
  domain: 'tool',
  description: 'a test domain',
  files: [
    {
      id: 'tool.yaml',
      path: '~/.config/tool/tool.yaml',
      canonical: 'tool.yaml',
      kind: 'whole',
      format: 'yaml',
    },
  ],
  hostVariables: [],
  coupling: { kind: 'none' },
};
const bytes = (text: string) => new TextEncoder().encode(text);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const OP = '01JCCCCCCCCCCCCCCCCCCCCCCC';

describe('FakeHost.writer is the controller writer', () => {
  let host: FakeHost;
  beforeEach(async () => {
    host = await createFakeHost({ now: '2026-03-04T05:06:07Z' });
  });
  afterEach(() => host.dispose());

  it('names backups as the controller does (file id and its hash, UTC stamp of the host clock, operation id)', async () => {
    await host.writeFile('~/.config/tool/tool.yaml', 'old: 1\n');
    const writer = host.writer(domain, OP);
    expect(writer.operationId).to.equal(OP);
    const result = await writer.replace({
      path: '~/.config/tool/tool.yaml',
      expectedSha256: sha256('old: 1\n'),
      content: bytes('new: 2\n'),
    });
    expect(result.backupPath).to.equal(
      `~/.local/state/fleet/backups/tool/tool.yaml-${sha256('tool.yaml').slice(0, 16)}.20260304T050607Z.${OP}.000.bak`,
    );
  });

  it("journals the operation's steps under the node state", async () => {
    await host.writer(domain, OP).replace({
      path: '~/.config/tool/tool.yaml',
      expectedSha256: null,
      content: bytes('a: 1\n'),
    });
    const journal = (
      await readFile(host.resolve(`~/.local/state/fleet/journal/${OP}.jsonl`), 'utf8')
    )
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { event: string }).event);
    expect(journal).to.deep.equal(['begin', 'write', 'renamed']);
  });

  it('refuses a symlinked parent directory, as the controller does', async () => {
    await mkdir(host.resolve('~/elsewhere'), { recursive: true });
    await mkdir(host.resolve('~/.config'), { recursive: true });
    await symlink(host.resolve('~/elsewhere'), host.resolve('~/.config/tool'));
    let code = 'no error';
    try {
      await host
        .writer(domain)
        .replace({ path: '~/.config/tool/tool.yaml', expectedSha256: null, content: bytes('x\n') });
    } catch (error) {
      code = isFleetError(error) ? error.code : String(error);
    }
    expect(code).to.equal('SYMLINK_REFUSED');
    expect(await readdir(host.resolve('~/elsewhere'))).to.deep.equal([]);
  });
});

describe('RecordedSupervisor', () => {
  it('records the flag and restarts with it; a start it was told to fail leaves nothing running', async () => {
    const supervisor = new RecordedSupervisor({ nodeId: 'node-01' }).failStartWith('node-02');
    await supervisor.recordNodeId('node-02');
    let failed = false;
    try {
      await supervisor.restart();
    } catch {
      failed = true;
    }
    expect([failed, supervisor.running]).to.deep.equal([true, null]);
    await supervisor.recordNodeId('node-01');
    expect((await supervisor.restart()).nodeId).to.equal('node-01');
    expect(supervisor.calls).to.deep.equal([
      'record node-02',
      'restart node-02',
      'record node-01',
      'restart node-01',
    ]);
  });
});
