/**
 * The harness-policy adopter (contract §8.5): what of a capture is a canonical candidate, and where in
 * the repo it goes.
 */
import { expect } from 'chai';
import type { Adopter, Capture, ManagedFile } from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';
import { harnessPolicyDomain, POLICY_MARKERS } from '../src/domain.js';
import register from '../src/register.js';

const plugin = { name: '@fleet/plugin-harness-policy', version: '0.1.0', type: 'core' };
const B = POLICY_MARKERS.begin;
const E = POLICY_MARKERS.end;
const fileById = (id: string): ManagedFile =>
  harnessPolicyDomain.files.find((f) => f.id === id) as ManagedFile;

/** A capture as the controller returns it: already redacted on the node. */
const capture = (path: string, content: string, host = 'node-01'): Capture => ({
  host,
  path,
  content,
  sha256: '0'.repeat(64),
  controller: 'test-build',
});

describe('harness-policy adopter', () => {
  let adopter: Adopter;
  before(async () => {
    adopter = await (
      await registryFromHooks([{ plugin, hook: register }])
    ).adopter('harness-policy');
  });

  it('adopts CLAUDE.md whole', () => {
    const content = '# Policy\n- {{ secret.TOKEN }}\n';
    expect(
      adopter.candidate(fileById('CLAUDE.md'), capture('~/.claude/CLAUDE.md', content)),
    ).to.equal(content);
  });

  it("adopts only a block file's block, never its users' text around it", () => {
    const live = `# Mine\r\nprivate notes\r\n${B}\r\n- edited rule\r\n${E}\r\nmore of mine`;
    expect(adopter.candidate(fileById('AGENTS.md'), capture('~/.codex/AGENTS.md', live))).to.equal(
      '- edited rule\n',
    );
  });

  it('refuses damaged markers, and a block file with no block to adopt', () => {
    expect(() =>
      adopter.candidate(fileById('GEMINI.md'), capture('~/.gemini/GEMINI.md', `${E}\nx\n${B}\n`)),
    )
      .to.throw()
      .with.property('code', 'MARKERS_REVERSED');
    expect(() =>
      adopter.candidate(fileById('GEMINI.md'), capture('~/.gemini/GEMINI.md', 'no block\n')),
    )
      .to.throw()
      .with.property('code', 'FILE_NOT_FOUND');
  });

  it('maps each file to mirror/<host>/harness-policy/<file id>', () => {
    for (const file of harnessPolicyDomain.files) {
      expect(adopter.mirrorPath(file, capture(file.path, ''))).to.equal(
        `mirror/node-01/harness-policy/${file.id}`,
      );
    }
  });

  it('refuses a host name that would make the mirror path escape', () => {
    expect(() =>
      adopter.mirrorPath(fileById('CLAUDE.md'), capture('~/.claude/CLAUDE.md', '', '..')),
    )
      .to.throw()
      .with.property('code', 'PATH_INVALID');
  });

  it('promotes a block into the canonical policy section, keeping the text around it byte for byte', () => {
    const canonical = `# Agent policy\r\n\r\nintro\r\n${B}\r\n- old rule\r\n${E}\r\nafter\r\n`;
    const promote = adopter.promote?.bind(adopter);
    expect(promote).to.be.a('function');
    expect(promote?.(fileById('AGENTS.md'), canonical, '- edited rule\n')).to.equal(
      `# Agent policy\r\n\r\nintro\r\n${B}\r\n- edited rule\r\n${E}\r\nafter\r\n`,
    );
    // A canonical without markers is its own section: the block becomes the whole file.
    expect(promote?.(fileById('GEMINI.md'), '# all policy\n', '- edited rule')).to.equal(
      '- edited rule\n',
    );
    // CLAUDE.md is managed whole: its candidate is the canonical.
    expect(promote?.(fileById('CLAUDE.md'), canonical, '# mine\n')).to.equal('# mine\n');
  });

  it('refuses to promote a block holding a marker, or into a canonical with damaged markers', () => {
    const promote = adopter.promote?.bind(adopter);
    expect(() => promote?.(fileById('AGENTS.md'), `${B}\nx\n${E}\n`, `${B}\n`))
      .to.throw()
      .with.property('code', 'MARKER_IN_BODY');
    expect(() => promote?.(fileById('AGENTS.md'), `${E}\nx\n${B}\n`, '- y\n'))
      .to.throw()
      .with.property('code', 'MARKERS_REVERSED');
  });
});
