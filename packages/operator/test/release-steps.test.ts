/**
 * The pure steps of `fleet release` (release.ts): the warning a dirty checkout's build carries and
 * the body of the commit that pins a release (docs/releases.md).
 */
import { expect } from 'chai';
import { dirtyCheckoutWarnings, releaseCommitBody } from '../src/release/release.js';

describe('release: its pure steps', () => {
  for (const [commit, warned] of [
    ['0123456789abcdef0123456789abcdef01234567', false],
    ['0123456789abcdef0123456789abcdef01234567-dirty', true],
    ['v1.2.3', false],
  ] as const) {
    it(`a build from ${commit} ${warned ? 'is' : 'is not'} warned about`, () => {
      const warnings = dirtyCheckoutWarnings(commit);
      expect(warnings).to.have.length(warned ? 1 : 0);
      if (warned) expect(warnings[0]).to.include(`(${commit})`).and.include('contract §1.8');
    });
  }

  it('the commit body names the bytes, the build, the key and every carried plugin', () => {
    const sha256 = 'a'.repeat(64);
    const body = releaseCommitBody(
      { sha256, bytes: 1234, commit: 'c'.repeat(40), packageName: '@fleet/cli' },
      'ssh-ed25519 AAAA test',
      [{ name: 'fleet-plugin-x', version: '1.0.0', sha256: 'b'.repeat(64) }],
    );
    expect(body.split('\n')).to.deep.equal([
      `sha256   ${sha256}`,
      'bytes    1234',
      `built    from ${'c'.repeat(40)}`,
      'signed   by ssh-ed25519 AAAA test',
      'package  @fleet/cli',
      `carries  fleet-plugin-x 1.0.0 ${'b'.repeat(64)}`,
    ]);
  });

  it('a release carrying no plugin has no carries line', () => {
    const body = releaseCommitBody(
      { sha256: 'a'.repeat(64), bytes: 1, commit: 'c'.repeat(40), packageName: '@fleet/cli' },
      'key',
      [],
    );
    expect(body).to.not.include('carries');
    expect(body.split('\n')).to.have.length(5);
  });
});
