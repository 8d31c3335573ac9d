/**
 * Path folding (reliability catalogue, "Path folding"; core policy/fold.ts): every check of a node
 * path against fleet's own files, another domain's paths and a policy pattern compares the folded
 * forms — full Unicode case folding and NFKC — and an 8.3 short-name component (`CONFIG~1`) is
 * refused on every platform, so a check means the same on ext4, APFS and NTFS.
 */
import { expect } from 'chai';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import { isFleetOwnPath } from '../src/policy/fleet-paths.js';
import { foldPath } from '../src/policy/fold.js';
import { checkNodePolicy, parseNodePolicy } from '../src/policy/load.js';
import { matchHomePattern } from '../src/policy/pattern.js';
import { isHomePath, parseHomePath } from '../src/paths.js';

const NFD_E = 'e\u0301'; // é decomposed: what HFS+ stores

describe('path folding: the fold itself', () => {
  const table: [a: string, b: string, same: boolean][] = [
    ['credentials', 'credentialſ', true], // ſ U+017F LATIN SMALL LETTER LONG S
    ['kube', '\u212Aube', true], // K U+212A KELVIN SIGN
    ['glass', 'glaß', true], // ß folds to ss (full folding; toLowerCase keeps ß)
    ['glass', 'gla\u1E9E', true], // ẞ U+1E9E folds to ss
    ['glaß', 'GLASS', true],
    ['café', `caf${NFD_E}`, true], // NFC and NFD é are one name on APFS and HFS+
    ['CAFÉ', `caf${NFD_E}`, true],
    ['credentials', 'credentıals', true], // dotless ı: NTFS upcases it to I
    ['credentials', 'credentİals', false], // İ U+0130 is i + U+0307, as on APFS and NTFS
    ['credenti\u0307als', 'credentİals', true],
    ['ﬁsh', 'fish', true], // NFKC: the ligature is its letters
    ['ｆｌｅｅｔ', 'fleet', true], // fullwidth letters
    ['fleet', 'fleat', false],
  ];
  for (const [a, b, same] of table) {
    it(`${a} and ${b} ${same ? 'fold to one name' : 'stay apart'}`, () => {
      expect(foldPath(a) === foldPath(b)).to.equal(same);
    });
  }

  it('is what toLowerCase alone is not: ſ, K and ß', () => {
    expect('credentialſ'.toLowerCase()).to.not.equal('credentials');
    expect('glaß'.toLowerCase()).to.not.equal('glass');
    expect(foldPath('credentialſ')).to.equal(foldPath('credentials'));
  });
});

describe("path folding: fleet's own files", () => {
  const table: [path: string, own: boolean][] = [
    ['~/.config/fleet/credentialſ.json', true],
    ['~/.local/ſtate/fleet/tokens.json', true],
    ['~/.config/fleet/credentıals.json', true],
    ['~/.config/fleet/credentİals.json', false],
    ['~/.config/ｆｌｅｅｔ/env', true],
    ['~/.CONFIG/FLEET/NODE-POLICY.YAML', true],
    [`~/.config/fleet/node-polic${'y'}.yaml`, true],
    ['~/.config/fleet/CREDEN~1.JSO', true], // 8.3 short names may alias any of them
    ['~/CONFIG~1/fleet/node-policy.yaml', true],
    ['~/.local/state/FLEET~1/tokens.json', true],
    ['~/.config/fleet/transport.yaml', false],
  ];
  for (const [path, own] of table) {
    it(`${path} ${own ? 'is' : 'is not'} fleet's own`, () => {
      expect(isFleetOwnPath(path)).to.equal(own);
    });
  }
});

describe('path folding: 8.3 short names are refused as node paths on every platform', () => {
  const table: [path: string, valid: boolean][] = [
    ['~/CONFIG~1/fleet/node-policy.yaml', false],
    ['~/.config/fleet/CREDEN~1.JSO', false],
    ['~/PROGRA~2/x', false],
    ['~/.config/app/notes.txt~', true], // an editor's backup, not a short name
    ['~/.config/app/file.~1~', true], // Emacs's numbered backup
    ['~/a~b/c', true],
  ];
  for (const [path, valid] of table) {
    it(`${path} is ${valid ? 'a valid' : 'refused as a'} node path`, () => {
      expect(isHomePath(path)).to.equal(valid);
      if (!valid) expect(() => parseHomePath(path)).to.throw(/8\.3 short name/);
    });
  }
});

describe('path folding: policy patterns', () => {
  const table: [pattern: string, path: string, matches: boolean][] = [
    ['~/.config/glass/**', '~/.config/glaß/x', true],
    ['~/.config/glass/**', '~/.config/gla\u1E9E/x', true],
    ['~/.kube/*', '~/.\u212Aube/config', true],
    ['~/.config/café/*', `~/.config/caf${NFD_E}/x`, true],
    ['~/.config/caf*/*', `~/.config/caf${NFD_E}/x`, true],
    ['~/.local/state/**', '~/.local/ſtate/x', true],
    ['~/.config/credentials', '~/.config/credentİals', false],
  ];
  for (const [pattern, path, matches] of table) {
    it(`${pattern} ${matches ? 'matches' : 'does not match'} ${path}`, () => {
      expect(matchHomePattern(pattern, path)).to.equal(matches);
    });
  }
});

describe("path folding: another domain's paths", () => {
  const identity: DomainDeclaration = {
    domain: 'transport-identity',
    description: 't',
    files: [
      {
        id: 'transport.yaml',
        path: '~/.config/fleet/transport.yaml',
        canonical: 'transport.yaml',
        kind: 'whole',
        format: 'yaml',
      },
    ],
    hostVariables: [],
    coupling: { kind: 'none' },
  };
  const router: DomainDeclaration = {
    domain: 'router',
    description: 'r',
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

  it("a policy override that reaches another domain's path in another case is refused", () => {
    const { policy } = parseNodePolicy(
      "version: 1\ndomains:\n  router:\n    paths: { 'router.yaml': ['~/.config/Fleet/*.yaml'] }\n",
      'p.yaml',
    );
    expect(checkNodePolicy(policy, [router, identity]).map((p) => p.message)).to.deep.equal([
      '~/.config/Fleet/*.yaml reaches ~/.config/fleet/transport.yaml, a path of domain transport-identity',
    ]);
  });
});
