/**
 * `fleet node-policy show`'s summary of a policy's `runtime` section (ADR 0019, docs/node-policy.md):
 * whose release signatures a runtime change needs, each key by the fingerprint errors name.
 */
import { expect } from 'chai';
import { parseNodePolicy, parseSshEd25519PublicKey } from '@fleet/core';
import { summarise } from '../src/node-policy.js';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJbV1a7cX8pE1yqT0m4Yc2kq3m9v8fQp6cJ7Zr0sUo2L';

describe('node-policy show: release signatures (ADR 0019)', () => {
  const fingerprintOf = (key: string) => parseSshEd25519PublicKey(key).fingerprint;
  const cases: [title: string, runtime: string, lines: string[]][] = [
    ['no runtime section', '', ['release signatures: no trusted key (runtime changes refused)']],
    [
      'allowUnsigned only',
      'runtime: { allowUnsigned: true }\n',
      ['release signatures: no trusted key; unsigned runtimes allowed'],
    ],
    [
      'a trusted key with its comment',
      `runtime: { trustedKeys: ['${KEY} release@seat'] }\n`,
      ['release signatures: 1 trusted key(s)', `  ${fingerprintOf(KEY)} release@seat`],
    ],
  ];
  for (const [title, runtime, lines] of cases) {
    it(title, () => {
      const { policy } = parseNodePolicy(`version: 1\n${runtime}`, 'node-policy.yaml');
      const summary = summarise(policy, fingerprintOf);
      const at = summary.findIndex((line) => line.startsWith('release signatures:'));
      expect(summary.slice(at, at + lines.length)).to.deep.equal(lines);
    });
  }
});
