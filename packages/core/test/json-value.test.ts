/**
 * The wire's JSON value and object checks (facts and parameters, contract §5) are one walk of the
 * value instead of zod's `z.json()` union (contract §14): they accept exactly what `z.json()` and
 * `z.record(z.string(), z.json())` accept, which this table checks against zod itself.
 */
import { expect } from 'chai';
import { z } from 'zod';
import { jsonObjectSchema, jsonValueSchema } from '../src/wire/protocol.js';

class Point {
  constructor(readonly x = 1) {}
}
const sparse: unknown[] = [1];
sparse[2] = 3;
const symbolKeyed = { a: 1, [Symbol('s')]: 2 };

const CASES: readonly [string, unknown, boolean][] = [
  ['a string', 'text', true],
  ['an empty string', '', true],
  ['an integer', 42, true],
  ['a negative fraction', -0.5, true],
  ['NaN', Number.NaN, false],
  ['Infinity', Number.POSITIVE_INFINITY, false],
  ['true', true, true],
  ['null', null, true],
  ['undefined', undefined, false],
  ['a bigint', 1n, false],
  ['a symbol', Symbol('x'), false],
  ['a function', () => 1, false],
  ['an empty array', [], true],
  ['a nested array', [1, ['a', [null, true]]], true],
  ['an array holding undefined', [1, undefined], false],
  ['an array holding NaN deep down', [[[Number.NaN]]], false],
  ['a sparse array', sparse, false],
  ['an empty object', {}, true],
  ['a nested object', { a: { b: [1, { c: 'd' }] }, e: null }, true],
  ['an object with an undefined value', { a: undefined }, false],
  ['an object with a function value', { a: () => 1 }, false],
  ['an object holding a Date', { at: new Date(0) }, false],
  ['a Date', new Date(0), false],
  ['a Map', new Map([['a', 1]]), false],
  ['a class instance', new Point(), false],
  ['an object without a prototype', Object.assign(Object.create(null) as object, { a: 1 }), true],
  ['an object with a symbol key', symbolKeyed, false],
];

describe('wire JSON values (jsonValueSchema, jsonObjectSchema)', () => {
  const zodValue = z.json();
  const zodObject = z.record(z.string(), z.json());
  for (const [title, value, json] of CASES) {
    it(`${title}: ${json ? 'a JSON value' : 'not a JSON value'}, as z.json() says`, () => {
      expect(zodValue.safeParse(value).success, 'z.json()').to.equal(json);
      expect(jsonValueSchema.safeParse(value).success).to.equal(json);
      const object = zodObject.safeParse(value).success;
      expect(jsonObjectSchema.safeParse(value).success, 'jsonObjectSchema').to.equal(object);
    });
  }

  it('names the field of a value that is not JSON, as every wire problem does', () => {
    const schema = z.strictObject({ facts: jsonValueSchema, parameters: jsonObjectSchema });
    const result = schema.safeParse({ facts: { at: new Date(0) }, parameters: [] });
    expect(result.success).to.equal(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).to.deep.equal([
      'facts',
      'parameters',
    ]);
  });
});
