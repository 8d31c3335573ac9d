/**
 * Request bodies (`http/request.ts`, `decodeJson`): strict UTF-8 and JSON, then the route's schema.
 * A body text that passed is remembered (contract §14: a fleet-wide drift sends every node the
 * same snapshot body), and decoded again without the second check — to a fresh value equal to the
 * first. What failed is checked, and refused, every time; a schema that changes its input (a
 * default) gives its own output every time.
 */
import { expect } from 'chai';
import * as z from '@fleet/core/zod';
import { FleetError, snapshotRequestSchema } from '@fleet/core';
import { decodeJson } from '../src/http/request.js';

const body = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof FleetError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return expect.fail('expected the body to be refused');
}

describe('request bodies: a text that passed its schema is decoded again without the check', () => {
  const request = {
    files: [{ domain: 'fixture', path: '~/.config/fixture/app.conf' }],
    backups: false,
    probes: [{ prober: 'fixture.digest', domain: 'fixture', parameters: { paths: {} } }],
  };

  it('decodes a text seen before to an equal value, a fresh one each time', () => {
    const first = decodeJson(body(request), snapshotRequestSchema);
    const second = decodeJson(body(request), snapshotRequestSchema);
    expect(second).to.deep.equal(first).and.to.deep.equal(request);
    expect(second).to.not.equal(first);
    // A handler changing its value changes nobody else's.
    first.files.push({ domain: 'fixture', path: '~/.config/fixture/other.conf' });
    expect(decodeJson(body(request), snapshotRequestSchema)).to.deep.equal(request);
  });

  it('refuses a text that failed, every time it comes', () => {
    const bad = body({ ...request, follow: true });
    const once = refusal(() => decodeJson(bad, snapshotRequestSchema));
    expect(once).to.match(/^BAD_REQUEST: the request body does not match the schema/);
    expect(refusal(() => decodeJson(bad, snapshotRequestSchema))).to.equal(once);
  });

  it('refuses a duplicate key in a text whose keys, once, passed', () => {
    decodeJson(body(request), snapshotRequestSchema);
    const duplicated = Buffer.from(
      JSON.stringify(request).replace('"backups":false', '"backups":false,"backups":true'),
    );
    expect(refusal(() => decodeJson(duplicated, snapshotRequestSchema))).to.contain(
      'duplicate key "backups"',
    );
  });

  it("gives a schema's own output each time when it differs from the input (a default)", () => {
    const schema = z.strictObject({ name: z.string(), mode: z.string().default('0600') });
    const text = body({ name: 'a' });
    expect(decodeJson(text, schema)).to.deep.equal({ name: 'a', mode: '0600' });
    expect(decodeJson(text, schema)).to.deep.equal({ name: 'a', mode: '0600' });
  });

  it('checks each schema on its own: a text that passed one is checked by another', () => {
    const text = body({ name: 'a' });
    expect(decodeJson(text, z.strictObject({ name: z.string() }))).to.deep.equal({ name: 'a' });
    expect(refusal(() => decodeJson(text, z.strictObject({ name: z.string().min(5) })))).to.match(
      /^BAD_REQUEST/,
    );
  });
});
