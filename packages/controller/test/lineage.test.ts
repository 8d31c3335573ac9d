/** Token lineage as data (tokens/lineage.ts; contract §5 "Tokens"): tables of cases. */
import { expect } from 'chai';
import type { Scope } from '@fleet/core';
import {
  cappedExpiry,
  lineageOf,
  mintedFrom,
  missingScopes,
  type LineageRecord,
} from '../src/tokens/lineage.js';

const at = (iso: string) => new Date(iso);
const token = (id: string, issuedBy?: string): LineageRecord => ({
  id,
  scopes: ['config:read'],
  expiresAt: '2027-01-01T00:00:00.000Z',
  ...(issuedBy === undefined ? {} : { issuedBy }),
});

describe('token lineage rules', () => {
  const caps: [string, number, string | undefined, string, boolean][] = [
    ['no minter: the lifetime asked for', 86_400_000, undefined, '2026-01-02T00:00:00.000Z', false],
    [
      'ends before the minter: as asked',
      3_600_000,
      '2026-01-01T02:00:00.000Z',
      '2026-01-01T01:00:00.000Z',
      false,
    ],
    [
      'ends after the minter: cut to it',
      365 * 86_400_000,
      '2026-01-01T01:00:00.000Z',
      '2026-01-01T01:00:00.000Z',
      true,
    ],
  ];
  for (const [name, ttl, minterExpiry, expected, capped] of caps) {
    it(`caps the expiry — ${name}`, () => {
      const minter =
        minterExpiry === undefined ? undefined : { ...token('m'), expiresAt: minterExpiry };
      expect(cappedExpiry(at('2026-01-01T00:00:00.000Z'), ttl, minter)).to.deep.equal({
        expiresAt: expected,
        capped,
      });
    });
  }

  const subsets: [Scope[], Scope[], Scope[]][] = [
    [['config:read', 'node-admin:tokens'], ['config:read'], []],
    [['node-admin:tokens'], ['node-admin:tokens', 'config:install'], ['config:install']],
    [['config:read'], ['config:read'], []],
  ];
  for (const [holder, wanted, missing] of subsets) {
    it(`names what [${wanted.join(',')}] needs beyond [${holder.join(',')}]`, () => {
      expect(missingScopes(holder, wanted)).to.deep.equal(missing);
    });
  }

  it('finds every token minted from one, transitively, and nothing else', () => {
    const tokens = [token('a'), token('b', 'a'), token('c', 'b'), token('d'), token('e', 'd')];
    expect(mintedFrom(tokens, 'a').map((t) => t.id)).to.deep.equal(['b', 'c']);
    expect(mintedFrom(tokens, 'c')).to.deep.equal([]);
  });

  it('ends a walk through a cycle an edited store could hold', () => {
    const tokens = [token('a', 'b'), token('b', 'a')];
    expect(mintedFrom(tokens, 'a').map((t) => t.id)).to.deep.equal(['b']);
    expect(lineageOf(tokens, 'a')).to.deep.equal(['b']);
  });

  it('lists the minters above a token, nearest first, empty for one issued on the node', () => {
    const tokens = [token('a'), token('b', 'a'), token('c', 'b'), token('x', 'gone')];
    expect(lineageOf(tokens, 'c')).to.deep.equal(['b', 'a']);
    expect(lineageOf(tokens, 'a')).to.deep.equal([]);
    expect(lineageOf(tokens, 'x')).to.deep.equal(['gone']);
  });
});
