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

  const accepted: {
    name: string;
    lines: string[];
    expected: Record<string, string | boolean>;
  }[] = [
    { name: 'a quoted 4-digit mode', lines: ['    mode: "0600"'], expected: { mode: '0600' } },
    { name: 'a 3-digit mode, kept as 4', lines: ["    mode: '644'"], expected: { mode: '0644' } },
    { name: 'a read-only mode', lines: ['    mode: "0400"'], expected: { mode: '0400' } },
    { name: 'an executable mode', lines: ['    mode: "0755"'], expected: { mode: '0755' } },
    {
      name: 'an action id',
      lines: ['    action: zsh-reload'],
      expected: { action: 'zsh-reload' },
    },
    {
      name: 'template: false (the source is copied, braces and all)',
      lines: ['    template: false'],
      expected: { template: false },
    },
    {
      name: 'a block entry with a mode (applied when fleet creates the file)',
      lines: ['    kind: block', "    marker: '# {mark} fleet'", '    mode: "0600"'],
      expected: { mode: '0600' },
    },
  ];
  for (const { name, lines, expected } of accepted) {
    it(`accepts ${name}`, () => {
      const { files } = parseFilesManifest(
        ['files:', '  - path: ~/.zshrc', '    source: zshrc', ...lines, ''].join('\n'),
        SOURCE,
      );
      expect(files[0]).to.include(expected);
    });
  }

  it('accepts siblings whose names share a prefix (~/.config/a, ~/.config/ab)', () => {
    const { files } = parseFilesManifest(
      'files:\n  - path: ~/.config/a\n    source: a\n  - path: ~/.config/ab\n    source: b\n',
      SOURCE,
    );
    expect(files.map((file) => file.path)).to.deep.equal(['~/.config/a', '~/.config/ab']);
  });

  it('an empty manifest declares nothing', () => {
    expect(parseFilesManifest('', SOURCE)).to.deep.equal({ files: [], hostVariables: [] });
  });

  const refused: {
    name: string;
    lines: string[];
    line: number;
    field: string;
    message?: string;
  }[] = [
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
      name: 'an unknown field',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    owner: root'],
      line: 4,
      field: 'files[0].owner',
    },
    {
      name: 'a mode that is a number (YAML reads 0600 as 600)',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: 0600'],
      line: 4,
      field: 'files[0].mode',
      message: 'quoted octal string',
    },
    {
      name: 'a mode that is not octal',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "0689"'],
      line: 4,
      field: 'files[0].mode',
      message: '3 or 4 octal digits',
    },
    {
      name: 'a mode of 5 digits',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "00644"'],
      line: 4,
      field: 'files[0].mode',
      message: '3 or 4 octal digits',
    },
    {
      name: 'a mode of 2 digits',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "64"'],
      line: 4,
      field: 'files[0].mode',
      message: '3 or 4 octal digits',
    },
    {
      name: 'a setuid mode',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "4755"'],
      line: 4,
      field: 'files[0].mode',
      message: 'setuid, setgid or sticky',
    },
    {
      name: 'a sticky mode',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "1644"'],
      line: 4,
      field: 'files[0].mode',
      message: 'setuid, setgid or sticky',
    },
    {
      name: 'a group-writable mode',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "0664"'],
      line: 4,
      field: 'files[0].mode',
      message: 'writable by group or others',
    },
    {
      name: 'an other-writable mode',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "0646"'],
      line: 4,
      field: 'files[0].mode',
      message: 'writable by group or others',
    },
    {
      name: 'a mode its owner cannot read',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    mode: "0200"'],
      line: 4,
      field: 'files[0].mode',
      message: 'readable by its owner',
    },
    {
      name: 'an action that is not an id',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    action: /bin/sh -c reboot'],
      line: 4,
      field: 'files[0].action',
      message: 'must be an action id',
    },
    {
      name: 'an action that is an argv',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    action: [systemctl, reload]'],
      line: 4,
      field: 'files[0].action',
      message: 'expected string',
    },
    {
      name: 'a template that is not a boolean',
      lines: ['files:', '  - path: ~/.zshrc', '    source: x', '    template: "no"'],
      line: 4,
      field: 'files[0].template',
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
    // chezmoi (testdata/scripts/edgecases.txtar: "inconsistent state") refuses a source state whose
    // targets overlap, before it writes anything: so does validate, at the later entry.
    {
      name: 'a parent and its child (…/a, then …/a/b)',
      lines: [
        'files:',
        '  - path: ~/.config/a',
        '    source: a',
        '  - path: ~/.config/a/b',
        '    source: b',
      ],
      line: 4,
      field: 'files[1].path',
      message: '~/.config/a/b is inside entry 0 (~/.config/a), which is a file',
    },
    {
      name: 'a child and its parent (…/a/b, then …/a)',
      lines: [
        'files:',
        '  - path: ~/.config/a/b',
        '    source: b',
        '  - path: ~/.config/a',
        '    source: a',
      ],
      line: 4,
      field: 'files[1].path',
      message: '~/.config/a is a directory above entry 0 (~/.config/a/b)',
    },
    {
      name: 'two paths that differ only in case (one file on macOS and Windows)',
      lines: [
        'files:',
        '  - path: ~/.config/App.conf',
        '    source: a',
        '  - path: ~/.config/app.conf',
        '    source: b',
      ],
      line: 4,
      field: 'files[1].path',
      message: 'the same file as entry 0 (~/.config/App.conf)',
    },
    {
      name: 'two paths that differ only in Unicode normalisation (é, e + U+0301)',
      lines: [
        'files:',
        '  - path: ~/caf\u00e9.conf',
        '    source: a',
        '  - path: ~/cafe\u0301.conf',
        '    source: b',
      ],
      line: 4,
      field: 'files[1].path',
      message: 'the same file as entry 0',
    },
  ];
  for (const { name, lines, line, field, message } of refused) {
    it(`refuses ${name} (FILES_MANIFEST_INVALID, line ${line}, ${field})`, () => {
      try {
        parseFilesManifest(`${lines.join('\n')}\n`, SOURCE);
        expect.fail('accepted');
      } catch (error) {
        if (!isFleetError(error)) throw error;
        expect(error.code).to.equal('FILES_MANIFEST_INVALID');
        expect(error.problems).to.have.length.greaterThan(0);
        expect(error.problems?.[0]).to.include({ file: SOURCE, line, path: field });
        if (message !== undefined) expect(error.problems?.[0]?.message).to.contain(message);
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
