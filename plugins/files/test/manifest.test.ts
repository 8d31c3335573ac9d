/**
 * `domains/files/files.yaml` (contract §10.4): what an entry may say, and the one-line problem,
 * with file, line and field, for each thing it may not. Every case is a row: copy one to add one.
 */
import { expect } from 'chai';
import { isFleetError } from '@fleet/core';
import { parseFilesManifest } from '../src/index.js';

const SOURCE = 'domains/files/files.yaml';

describe('files plugin: the files.yaml manifest', () => {
  it('turns each entry into a managed file named by its path', () => {
    const { files, hostVariables } = parseFilesManifest(
      [
        'hostVariables: [git_email]',
        'files:',
        '  - path: ~/.zshrc',
        '    source: zshrc',
        '  - path: ~/.gitconfig',
        '    source: gitconfig',
        '    kind: block',
        "    marker: '# {mark} fleet'",
        '',
      ].join('\n'),
      SOURCE,
    );
    expect(hostVariables).to.deep.equal(['git_email']);
    expect(files).to.deep.equal([
      { id: '~/.zshrc', path: '~/.zshrc', canonical: 'zshrc', kind: 'whole', format: 'text' },
      {
        id: '~/.gitconfig',
        path: '~/.gitconfig',
        canonical: 'gitconfig',
        kind: 'block',
        format: 'text',
        markers: { begin: '# BEGIN fleet', end: '# END fleet' },
      },
    ]);
  });

  it('an empty manifest declares nothing', () => {
    expect(parseFilesManifest('', SOURCE)).to.deep.equal({ files: [], hostVariables: [] });
  });

  const refused: { name: string; lines: string[]; line: number; field: string }[] = [
    {
      name: 'a path outside the home',
      lines: ['files:', '  - path: /etc/passwd', '    source: x'],
      line: 2,
      field: 'files[0].path',
    },
    {
      name: 'a path with ..',
      lines: ['files:', '  - path: ~/../other/.zshrc', '    source: x'],
      line: 2,
      field: 'files[0].path',
    },
    {
      name: "fleet's own state",
      lines: ['files:', '  - path: ~/.config/fleet/credentials.json', '    source: x'],
      line: 2,
      field: 'files[0].path',
    },
    {
      name: 'a source outside domains/files/',
      lines: ['files:', '  - path: ~/.zshrc', '    source: ../router/router.yaml'],
      line: 3,
      field: 'files[0].source',
    },
    {
      name: 'a block without a marker',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    kind: block'],
      line: 2,
      field: 'files[0].marker',
    },
    {
      name: 'a marker without {mark}',
      lines: [
        'files:',
        '  - path: ~/.zshrc',
        '    source: x',
        '    kind: block',
        '    marker: "# fleet"',
      ],
      line: 5,
      field: 'files[0].marker',
    },
    {
      name: 'a marker on a whole entry',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    marker: "# {mark}"'],
      line: 4,
      field: 'files[0].marker',
    },
    {
      name: 'an unknown field (mode is not supported yet)',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "0644"'],
      line: 4,
      field: 'files[0].mode',
    },
    {
      name: 'the same path twice',
      lines: [
        'files:',
        '  - path: ~/.zshrc',
        '    source: a',
        '  - path: ~/.zshrc',
        '    source: b',
      ],
      line: 4,
      field: 'files[1].path',
    },
  ];
  for (const { name, lines, line, field } of refused) {
    it(`refuses ${name} (FILES_MANIFEST_INVALID, line ${line}, ${field})`, () => {
      try {
        parseFilesManifest(`${lines.join('\n')}\n`, SOURCE);
        expect.fail('accepted');
      } catch (error) {
        if (!isFleetError(error)) throw error;
        expect(error.code).to.equal('FILES_MANIFEST_INVALID');
        expect(error.problems).to.have.length.greaterThan(0);
        expect(error.problems?.[0]).to.include({ file: SOURCE, line, path: field });
      }
    });
  }

  it('refuses YAML that does not parse, with its line', () => {
    try {
      parseFilesManifest('files:\n  - path: ~/.zshrc\n   source: [\n', SOURCE);
      expect.fail('accepted');
    } catch (error) {
      if (!isFleetError(error)) throw error;
      expect(error.code).to.equal('FILES_MANIFEST_INVALID');
      expect(error.problems?.[0]?.line).to.be.a('number');
    }
  });
});
