import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { createRedactor, SECRET_MIN_LENGTH } from '../src/secrets/redact.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('secrets/redact: createRedactor', () => {
  const digest = sha256('the router config');
  // A hex secret that happens to sit inside that digest (catalogue 41: never rewrite a hash).
  const inside = digest.slice(20, 32);
  const chain = new Map([
    ['API_KEY', 'k-now-1234567'],
    ['HEXISH', inside],
  ]);
  const remembered = [
    { name: 'API_KEY', value: 'k-old-7654321' }, // rotated: the chain holds a new value now
    { name: 'DB_PASS', value: 'removed-pass-1' }, // removed: the name left the chain
    { name: 'OLD_NAME', value: 'k-now-1234567' }, // the chain's value under an older name
  ];
  const redactor = createRedactor(chain, remembered);

  const content: [title: string, text: string, expected: string][] = [
    ['a current value', 'key=k-now-1234567', 'key={{ secret.API_KEY }}'],
    ['a rotated value maps to its name', 'key=k-old-7654321', 'key={{ secret.API_KEY }}'],
    [
      'a removed value keeps the name it last had',
      'pass=removed-pass-1',
      'pass={{ secret.DB_PASS }}',
    ],
    [
      'content is redacted everywhere, a digest-looking run too',
      `x=${digest}`,
      `x=${digest.replace(inside, '{{ secret.HEXISH }}')}`,
    ],
  ];
  for (const [title, text, expected] of content) {
    it(`content: ${title}`, () => expect(redactor.content(text)).to.equal(expected));
  }

  const annotations: [title: string, text: string, expected: string][] = [
    ['a digest in a message stays whole', `live sha256 is ${digest}`, `live sha256 is ${digest}`],
    [
      'a git commit id stays whole',
      `commit ${digest.slice(0, 40)}`,
      `commit ${digest.slice(0, 40)}`,
    ],
    [
      'outside a digest the value is still replaced',
      `${inside} and ${digest}`,
      `{{ secret.HEXISH }} and ${digest}`,
    ],
    [
      'a 41-character hex run is no digest',
      `${digest.slice(0, 41)}`,
      digest.slice(0, 41).replace(inside, '{{ secret.HEXISH }}'),
    ],
    [
      'messages are redacted like content otherwise',
      'failed: k-old-7654321',
      'failed: {{ secret.API_KEY }}',
    ],
  ];
  for (const [title, text, expected] of annotations) {
    it(`annotation: ${title}`, () => expect(redactor.annotation(text)).to.equal(expected));
  }

  it('a digest that is itself a secret value is replaced', () => {
    const hexSecret = randomBytes(32).toString('hex');
    const r = createRedactor(new Map([['CANARY', hexSecret]]));
    expect(r.annotation(`sha256 ${hexSecret}`)).to.equal('sha256 {{ secret.CANARY }}');
    expect(r.json({ sha256: hexSecret })).to.deep.equal({ sha256: '{{ secret.CANARY }}' });
  });

  it('json: facts keep their digests, keys and strings are annotations', () => {
    const facts = {
      file: { path: '~/.config/router/router.yaml', sha256: digest },
      [`note k-now-1234567`]: ['k-old-7654321', 3, true, null],
    };
    expect(redactor.json(facts)).to.deep.equal({
      file: { path: '~/.config/router/router.yaml', sha256: digest },
      'note {{ secret.API_KEY }}': ['{{ secret.API_KEY }}', 3, true, null],
    });
  });

  it('longest value first across current and remembered values', () => {
    const r = createRedactor(new Map([['SHORTER', 'abcdefgh']]), [
      { name: 'LONGER', value: 'abcdefgh-ijk' },
    ]);
    expect(r.content('abcdefgh-ijk abcdefgh')).to.equal('{{ secret.LONGER }} {{ secret.SHORTER }}');
  });

  it(`never redacts a value under ${SECRET_MIN_LENGTH} characters, current or remembered`, () => {
    const r = createRedactor(new Map([['SHORTY', 'a']]), [{ name: 'PORT', value: '30' }]);
    expect(r.content('match 30')).to.equal('match 30');
    expect(r.namesIn('match 30')).to.deep.equal([]);
  });

  it('rotatedIn names a secret whose earlier value the text holds — not a current one, not a removed one', () => {
    expect(redactor.rotatedIn('key=k-old-7654321')).to.deep.equal(['API_KEY']);
    expect(redactor.rotatedIn('key=k-now-1234567')).to.deep.equal([]);
    expect(redactor.rotatedIn('pass=removed-pass-1')).to.deep.equal([]);
    expect(redactor.rotatedIn('k-old-7654321 and k-now-1234567')).to.deep.equal(['API_KEY']);
  });

  it('namesIn lists the names whose values occur', () => {
    expect(redactor.namesIn('k-old-7654321 and removed-pass-1')).to.deep.equal([
      'API_KEY',
      'DB_PASS',
    ]);
  });
});
