import { expect } from 'chai';
import { FleetError } from '../src/errors.js';
import { MAX_JSON_DEPTH, findBadKey, parseStrictJson } from '../src/json.js';

function thrown(fn: () => unknown): FleetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError to be thrown');
}

const SOURCE = 'request body';

describe('json (hostile JSON, catalogue 39)', () => {
  afterEach(() => {
    // No prototype changes anywhere, whatever a test parsed.
    expect(({} as Record<string, unknown>)['isAdmin']).to.equal(undefined);
    expect(Object.prototype).to.not.have.own.property('isAdmin');
  });

  describe('accepts valid JSON and returns the parsed value', () => {
    const cases: [title: string, text: string][] = [
      ['a flat object', '{"path":"ok","size":3}'],
      ['scalars and arrays at the top', '[1,"two",null,true]'],
      ['a bare string', '"hello"'],
      ['the same key in sibling objects', '{"a":{"x":1},"b":{"x":2}}'],
      ['the same key in objects inside an array', '[{"id":1,"v":"a"},{"id":2,"v":"b"}]'],
      [
        'keys inside arrays of objects at depth',
        '{"hosts":[{"name":"a"},{"name":"b","tags":[{"k":1}]}]}',
      ],
      ['strings containing escaped quotes', '{"a\\"b":1,"a":"x\\"y","b":"\\"","c":2}'],
      ['a value that looks like a key', '{"a":"\\"a\\":1","b":2}'],
      ['a string ending in an escaped backslash', '{"a":"\\\\","b":"\\\\\\\\"}'],
      ['braces and brackets inside strings', '{"a":"{[}]","b":{"a":1}}'],
      ['a value equal to a forbidden word', '{"k":"__proto__","v":"constructor"}'],
      ['whitespace around colons', '{ "a" : 1 ,\n "b"\t:\r\n2 }'],
      ['unicode keys', '{"café":1,"cafe\\u0301":2}'],
    ];
    for (const [title, text] of cases) {
      it(title, () => {
        expect(parseStrictJson(text, SOURCE, 'BAD_REQUEST')).to.deep.equal(JSON.parse(text));
        expect(findBadKey(text)).to.equal(undefined);
      });
    }
  });

  describe('refuses duplicate keys at any depth', () => {
    const cases: [title: string, text: string, key: string][] = [
      ['at the top', '{"path":"ok","path":"../../etc/passwd"}', 'path'],
      ['in a nested object', '{"a":{"b":1,"c":{"d":1,"d":2}}}', 'd'],
      ['in an object inside an array', '[{"a":1},{"a":1,"b":2,"a":3}]', 'a'],
      ['after a closed sibling object', '{"a":{"x":1},"x":2,"x":3}', 'x'],
      ['spelled with an escape', '{"a":1,"\\u0061":2}', 'a'],
      ['with escaped quotes in the key', '{"a\\"b":1,"a\\"b":2}', 'a"b'],
    ];
    for (const [title, text, key] of cases) {
      it(title, () => {
        expect(findBadKey(text)).to.deep.equal({ key, duplicate: true });
        const error = thrown(() => parseStrictJson(text, SOURCE, 'BAD_REQUEST'));
        expect(error.code).to.equal('BAD_REQUEST');
        expect(error.message).to.equal(`${SOURCE}: duplicate key ${JSON.stringify(key)}`);
      });
    }
  });

  describe('refuses prototype keys', () => {
    const cases: [title: string, text: string, key: string][] = [
      ['__proto__ at the top', '{"__proto__":{"isAdmin":true}}', '__proto__'],
      ['__proto__ nested', '{"a":[{"b":{"__proto__":{"isAdmin":true}}}]}', '__proto__'],
      ['__proto__ spelled with an escape', '{"\\u005f_proto__":{"isAdmin":true}}', '__proto__'],
      ['constructor.prototype', '{"constructor":{"prototype":{"isAdmin":true}}}', 'constructor'],
      ['prototype', '{"x":{"prototype":{"isAdmin":true}}}', 'prototype'],
    ];
    for (const [title, text, key] of cases) {
      it(title, () => {
        expect(findBadKey(text)).to.deep.equal({ key, duplicate: false });
        const error = thrown(() => parseStrictJson(text, SOURCE, 'CREDENTIALS_INVALID'));
        expect(error.code).to.equal('CREDENTIALS_INVALID');
        expect(error.message).to.equal(`${SOURCE}: forbidden key ${JSON.stringify(key)}`);
      });
    }

    it('leaves Object.prototype alone even when parsing such input with plain JSON.parse', () => {
      const value = JSON.parse('{"__proto__":{"isAdmin":true}}') as Record<string, unknown>;
      expect(Object.hasOwn(value, '__proto__')).to.equal(true);
      expect(() =>
        parseStrictJson('{"__proto__":{"isAdmin":true}}', SOURCE, 'BAD_REQUEST'),
      ).to.throw();
    });
  });

  describe('nesting depth (catalogue 39: 200,000 levels used to overflow the stack after the parse)', () => {
    const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    it(`accepts ${MAX_JSON_DEPTH} levels`, () => {
      expect(() => parseStrictJson(nest(MAX_JSON_DEPTH), SOURCE, 'BAD_REQUEST')).to.not.throw();
    });
    for (const depth of [MAX_JSON_DEPTH + 1, 200_000]) {
      it(`refuses ${depth} levels with the stable code, naming the bound`, () => {
        const error = thrown(() => parseStrictJson(`{"a":${nest(depth)}}`, SOURCE, 'BAD_REQUEST'));
        expect(error.code).to.equal('BAD_REQUEST');
        expect(error.message).to.equal(`${SOURCE} nests deeper than ${MAX_JSON_DEPTH} levels`);
      });
    }
  });

  describe('invalid JSON', () => {
    const TOKEN = 'tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
    const cases: [title: string, text: string][] = [
      ['a truncated document', `{"hosts":{"a":{"token":"${TOKEN}"}`],
      ['a trailing comma', `{"token":"${TOKEN}",}`],
      ['single quotes', `{'token':'${TOKEN}'}`],
      ['a bare word', TOKEN],
      ['an empty text', ''],
    ];
    for (const [title, text] of cases) {
      it(`${title}: the message names the source, never the input`, () => {
        const error = thrown(() => parseStrictJson(text, SOURCE, 'CREDENTIALS_INVALID'));
        expect(error.code).to.equal('CREDENTIALS_INVALID');
        expect(error.message).to.equal(`${SOURCE} is not valid JSON`);
        expect(error.message).to.not.contain(TOKEN.slice(4, 20));
        expect(error.cause).to.equal(undefined); // V8's message, which quotes the input, is dropped
      });
    }
  });
});
