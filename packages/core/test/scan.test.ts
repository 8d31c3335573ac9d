import { expect } from 'chai';
import { entropy, scanForSecrets } from '../src/secrets/scan.js';

describe('scanForSecrets (the adopt gate)', () => {
  const flagged: [string, string][] = [
    ['-----BEGIN OPENSSH PRIVATE KEY-----', 'private-key'],
    ['-----BEGIN RSA PRIVATE KEY-----', 'private-key'],
    ['-----BEGIN PGP PRIVATE KEY BLOCK-----', 'private-key'],
    [`token: ghp_${'a1B2c3D4e5'.repeat(4)}`, 'github-token'],
    [`pat = github_pat_${'A1b2C3d4E5'.repeat(5)}`, 'github-token'],
    ['gitlab: glpat-abcdefghij0123456789', 'gitlab-token'],
    ['slack: xoxb-1234567890-abcdef', 'slack-token'],
    ['aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'aws-access-key'],
    [`OPENAI_API_KEY=sk-proj-${'x'.repeat(30)}`, 'openai-or-anthropic-key'],
    ['db: postgres://user:hunter2@db.internal/app', 'url-credentials'],
    ['auth: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlc2lnbmF0dXJl', 'jwt'],
    ['key: 9fJk2LmQ8xZr4TbW1vNc7YpA3sHd6GeU0oKi5', 'high-entropy-string'],
  ];
  for (const [line, rule] of flagged) {
    it(`flags ${rule}: ${line.slice(0, 24)}…`, () => {
      expect(scanForSecrets(`name: x\n${line}\n`)).to.deep.equal([{ line: 2, rule }]);
    });
  }

  const clean = [
    'expected_node: node-01',
    'listen: 127.0.0.1:8080',
    'upstream: http://127.0.0.1:9000/api/v1/things',
    '- Never write secrets into files, commits or messages: refer to them by name.',
    'path: ~/.local/share/router/volume/router.yaml',
    'api_key: {{ secret.API_KEY_WITH_A_VERY_LONG_NAME_0123456789 }}',
    'url: postgres://{{ secret.DB_USER }}:{{ secret.DB_PASS }}@db/app',
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  ];
  for (const line of clean) {
    it(`passes ${line.slice(0, 40)}`, () => {
      expect(scanForSecrets(line)).to.deep.equal([]);
    });
  }

  it('reports each line once, with every finding in line order', () => {
    const text =
      'a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----\nAKIAIOSFODNN7EXAMPLE\n';
    expect(scanForSecrets(text).map((f) => f.line)).to.deep.equal([2, 5]);
  });

  it('never carries the value it found', () => {
    const findings = scanForSecrets('token: ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    expect(JSON.stringify(findings)).to.not.contain('ghp_');
  });

  it('measures entropy in bits per character', () => {
    expect(entropy('aaaa')).to.equal(0);
    expect(entropy('abcd')).to.equal(2);
  });
});
