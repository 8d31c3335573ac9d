/**
 * The files adopter (contract §8.5, §10.4): what of a host's file the repository may admit, and
 * where it lands — through core's adopt pipeline, as `fleet config adopt` runs it.
 */
import { expect } from 'chai';
import { adoptCandidate, isFleetError, withRepoFiles, type Capture } from '@fleet/core';
import { filesAdopter, filesDomain, filesInstaller } from '../src/index.js';

const MANIFEST = `hostVariables: [git_email]
files:
  - path: ~/.config/demo/hello.conf
    source: hello.conf
  - path: ~/.gitconfig
    source: gitconfig
    kind: block
    marker: '# {mark} fleet'
  - path: ~/.tmux.conf
    source: tmux.conf
    template: false
`;
const declaration = withRepoFiles(filesDomain, filesInstaller, MANIFEST, []);
const fileAt = (path: string) => declaration.files.find((file) => file.path === path)!;

function capture(path: string, content: string): Capture {
  return { host: 'node-01', path, sha256: '0'.repeat(64), content, controller: 'test' };
}

describe('files plugin: adopter', () => {
  it('adopts a whole entry whole, into mirror/<host>/files/<path>', () => {
    const candidate = adoptCandidate({
      host: 'node-01',
      declaration,
      file: fileAt('~/.config/demo/hello.conf'),
      capture: capture('~/.config/demo/hello.conf', 'greeting = hi\n'),
      variables: {},
      adopter: filesAdopter,
    });
    expect(candidate.mirrorPath).to.equal('mirror/node-01/files/.config/demo/hello.conf');
    expect(candidate.content).to.equal('greeting = hi\n');
  });

  it("adopts a block entry's body only, host variables reverse-substituted", () => {
    const live =
      '[core]\n\teditor = emacs\n\n# BEGIN fleet\n[user]\n\temail = ops@example.org\n# END fleet\n';
    const candidate = adoptCandidate({
      host: 'node-01',
      declaration,
      file: fileAt('~/.gitconfig'),
      capture: capture('~/.gitconfig', live),
      variables: { git_email: 'ops@example.org' },
      adopter: filesAdopter,
    });
    expect(candidate.content).to.equal('[user]\n\temail = {{ host.git_email }}\n');
    expect(candidate.content).to.not.contain('emacs'); // the user's lines are theirs
  });

  it('refuses a block entry whose file has no block', () => {
    try {
      filesAdopter.candidate(fileAt('~/.gitconfig'), capture('~/.gitconfig', '[core]\n'));
      expect.fail('no refusal');
    } catch (error) {
      expect(isFleetError(error) && error.code).to.equal('FILE_NOT_FOUND');
    }
  });

  it("promotes the candidate as the entry's source", () => {
    expect(filesAdopter.promote?.(fileAt('~/.gitconfig'), 'old\n', 'new')).to.equal('new\n');
  });

  describe("a template: false entry and a secret's value (never a literal placeholder, never the value in git)", () => {
    const TOKEN = 'set -g @token "{{ secret.TMUX_TOKEN }}"\n';
    const cases: [
      what: string,
      file: string,
      content: string,
      redacted: boolean | undefined,
      refused: boolean,
    ][] = [
      ['the node redacted a value in a template: false entry', '~/.tmux.conf', TOKEN, true, true],
      ['not known whether it was redacted', '~/.tmux.conf', TOKEN, undefined, true],
      ['the text {{ secret.X }} the node did not redact', '~/.tmux.conf', TOKEN, false, false],
      [
        'a redacted file without a placeholder in it',
        '~/.tmux.conf',
        'set -g mouse on\n',
        true,
        false,
      ],
      ['a template entry keeps the placeholder', '~/.config/demo/hello.conf', TOKEN, true, false],
    ];
    for (const [what, path, content, redacted, refused] of cases) {
      it(`${what}: ${refused ? 'SECRET_FOUND, nothing adopted' : 'adopted'}`, () => {
        const taken = () =>
          adoptCandidate({
            host: 'node-01',
            declaration,
            file: fileAt(path),
            capture: {
              ...capture(path, content),
              ...(redacted === undefined ? {} : { redacted }),
            },
            variables: {},
            adopter: filesAdopter,
          });
        if (!refused) {
          expect(taken().content).to.contain(content.trimEnd());
          return;
        }
        try {
          taken();
          expect.fail('no refusal');
        } catch (error) {
          expect(isFleetError(error) && error.code).to.equal('SECRET_FOUND');
          const message = (error as Error).message;
          expect(message).to.contain('TMUX_TOKEN').and.contain('template: false');
          expect(message).to.not.contain('\n');
        }
      });
    }
  });
});
