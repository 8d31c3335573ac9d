/**
 * What a host should hold from a source as git records it (issue 38, contract §10.4): an
 * executable source installs executable when its entry names no mode (git checks it out 0755,
 * chezmoi's `executable_` writes 0755; 0700 when it names a secret, so a file holding one stays
 * its owner's), a declared mode wins, and a source that cannot be used is an `error` naming it
 * (RENDER_FAILED) — never installed as something else.
 */
import { expect } from 'chai';
import type { CanonicalSnapshot } from '../src/classify/history.js';
import { domainRuntime } from '../src/config/domain-runtime.js';
import { targetsForHost } from '../src/config/targets.js';
import type { DomainDeclaration, ManagedFile } from '../src/interfaces/domain.js';
import type { CanonicalSource } from '../src/repo/sources.js';
import { fileInstaller } from '../src/installers/file-installer.js';

const entry = (extra: Partial<ManagedFile> = {}): ManagedFile => ({
  id: '~/bin/tool',
  path: '~/bin/tool',
  canonical: 'tool',
  kind: 'whole',
  format: 'text',
  ...extra,
});
const declared = (file: ManagedFile, repoManifest = true): DomainDeclaration => ({
  domain: 'files',
  description: 'files',
  files: [file],
  ...(repoManifest ? { repoManifest: 'files.yaml' } : {}),
  hostVariables: [],
  coupling: { kind: 'none' },
});
const snapshotOf = (text: string | null, source?: CanonicalSource): CanonicalSnapshot => ({
  commit: 'c1',
  atRef: new Map([['domains/files/tool', text]]),
  history: new Map(),
  sources: new Map(source === undefined ? [] : [['domains/files/tool', source]]),
});

describe('file targets from sources as git records them', () => {
  const cases: {
    name: string;
    file: ManagedFile;
    repoManifest?: boolean;
    text: string | null;
    source?: CanonicalSource;
    mode?: string;
    error?: string;
  }[] = [
    {
      name: 'an executable source without a mode installs 0755',
      file: entry(),
      text: '#!/bin/sh\n',
      source: { executable: true },
      mode: '0755',
    },
    {
      name: 'an executable source that names a secret installs 0700',
      file: entry(),
      text: '#!/bin/sh\ntoken={{ secret.TOKEN }}\n',
      source: { executable: true },
      mode: '0700',
    },
    {
      name: "an executable source whose entry says mode 0600 keeps the entry's mode",
      file: entry({ mode: '0600' }),
      text: '#!/bin/sh\n',
      source: { executable: true },
      mode: '0600',
    },
    {
      name: 'a source that is not executable adds no mode',
      file: entry(),
      text: 'x\n',
      source: { executable: false },
    },
    {
      name: "a block entry's file is the user's: no mode from its source",
      file: entry({ kind: 'block', markers: { begin: '# BEGIN', end: '# END' } }),
      text: 'x\n',
      source: { executable: true },
    },
    {
      name: "a domain's own declared file keeps its declaration",
      file: entry(),
      repoManifest: false,
      text: 'x\n',
      source: { executable: true },
    },
    {
      name: 'a source refused by the reader is an error naming it',
      file: entry(),
      text: null,
      source: {
        problem: 'domains/files/tool is not valid UTF-8 (the first invalid byte is at offset 3)',
      },
      error: 'domains/files/tool is not valid UTF-8',
    },
  ];
  it('an entry with template: false is its source as it is, braces and all (Ansible copy)', () => {
    const text = 'status "{{ session }}" {{ host.port }} {{ "{{" }}\n';
    const declaration = declared(entry({ template: false }));
    const runtime = domainRuntime(declaration, fileInstaller({ domain: 'files' }));
    const [target] = targetsForHost(
      'alpha',
      { port: '1' },
      [runtime],
      snapshotOf(text, { executable: false }),
    );
    expect(target?.desired).to.deep.equal({ ok: true, content: text });
  });

  describe('a source that is not UTF-8 text is its bytes (Ansible copy, chezmoi)', () => {
    const latin1 = Buffer.from('caf\xe9 {{ session }}\n', 'latin1').toString('base64');
    const binary = 'domains/files/tool is not valid UTF-8 (the first invalid byte is at offset 3)';
    it('a whole entry copies it byte for byte: never rendered, its braces bytes like the rest', () => {
      const runtime = domainRuntime(declared(entry()), fileInstaller({ domain: 'files' }));
      const [target] = targetsForHost(
        'alpha',
        {},
        [runtime],
        snapshotOf(latin1, { executable: false, binary }),
      );
      expect(target?.desired).to.deep.equal({ ok: true, content: latin1, encoding: 'base64' });
    });
    it("a block entry's source is text: refused with the offset (RENDER_FAILED)", () => {
      const block = entry({ kind: 'block', markers: { begin: '# BEGIN', end: '# END' } });
      const runtime = domainRuntime(declared(block), fileInstaller({ domain: 'files' }));
      const [target] = targetsForHost(
        'alpha',
        {},
        [runtime],
        snapshotOf(latin1, { executable: false, binary }),
      );
      expect(target?.desired.ok).to.equal(false);
      if (target?.desired.ok === false) {
        expect(target.desired.problem.message).to.contain('offset 3').and.contain('block');
      }
    });
    it("a domain's own declared file is text: refused likewise", () => {
      const runtime = domainRuntime(declared(entry(), false), fileInstaller({ domain: 'files' }));
      const [target] = targetsForHost(
        'alpha',
        {},
        [runtime],
        snapshotOf(latin1, { executable: false, binary }),
      );
      expect(target?.desired.ok).to.equal(false);
    });
  });

  it('the same source as a template is refused: {{ session }} is no placeholder (RENDER_FAILED)', () => {
    const declaration = declared(entry());
    const runtime = domainRuntime(declaration, fileInstaller({ domain: 'files' }));
    const [target] = targetsForHost('alpha', {}, [runtime], snapshotOf('"{{ session }}"\n'));
    expect(target?.desired.ok).to.equal(false);
  });

  for (const { name, file, repoManifest, text, source, mode, error } of cases) {
    it(name, () => {
      const declaration = declared(file, repoManifest);
      const runtime = domainRuntime(declaration, fileInstaller({ domain: 'files' }));
      const [target] = targetsForHost('alpha', {}, [runtime], snapshotOf(text, source));
      if (error !== undefined) {
        expect(target?.desired.ok).to.equal(false);
        if (target?.desired.ok === false) {
          expect(target.desired.problem).to.include({ file: 'domains/files/tool' });
          expect(target.desired.problem.message).to.contain(error);
        }
        return;
      }
      expect(target?.desired).to.deep.equal({ ok: true, content: text });
      expect(target?.file.mode).to.equal(mode);
    });
  }
});
