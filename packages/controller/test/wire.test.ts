/** The wire protocol as data: route table, schemas, error vocabulary, audit chain verifier. */
import { expect } from 'chai';
import {
  ERROR_CODES,
  ROUTES,
  SCOPES,
  auditLineHash,
  auditRecordSchema,
  installRequestSchema,
  matchRoute,
  proberScope,
  verifyAuditChain,
  type AuditRecord,
} from '@fleet/core';

describe('wire protocol', () => {
  describe('route table', () => {
    it('gives every route at least one scope, each spelled as in contract §5', () => {
      for (const route of ROUTES) {
        expect(route.scopes, route.operation).to.not.be.empty;
        for (const scope of route.scopes) expect(SCOPES).to.include(scope);
      }
      expect([...SCOPES]).to.deep.equal([
        'config:read',
        'config:install',
        'config:adopt',
        'versions:read',
        'runtime:upgrade',
        'node-admin:bootstrap',
        'node-admin:tokens',
      ]);
    });

    it('opens the legacy token to read operations only', () => {
      for (const route of ROUTES) {
        if (route.mutates || route.operation === 'capture')
          expect(route.legacy, route.operation).to.equal(false);
      }
    });

    it('opens token administration to node-admin:tokens only, never the legacy token, and nothing else to it', () => {
      const admin = ROUTES.filter((route) => route.scopes.includes('node-admin:tokens'));
      expect(admin.map((r) => r.operation).sort()).to.deep.equal([
        'token-issue',
        'token-lineage',
        'token-list',
        'token-revoke',
        'token-rotate',
      ]);
      for (const route of admin) {
        expect(route.scopes, route.operation).to.deep.equal(['node-admin:tokens']);
        expect(route.legacy, route.operation).to.equal(false);
        expect(route.path.startsWith('/v1/tokens'), route.operation).to.equal(true);
      }
      expect(ROUTES.filter((r) => r.path.includes('token'))).to.deep.equal(admin);
    });

    const tricks: [string, string][] = [
      ['GET', '/v1/exec'],
      ['POST', '/v1/identity'],
      ['GET', '/v1/install'],
      ['POST', '/v1/install/../identity'],
      ['POST', '//v1/install'],
      ['POST', '/v1/%69nstall'],
      ['POST', '/v1/%2e%2e/install'],
      ['GET', '/v1/identity/'],
      ['GET', '/V1/identity'],
      ['GET', '/v1/Identity'],
      ['GET', '/v1/identity?x=1'],
      ['GET', '/v1/identity#x'],
      ['GET', '/v1/operations/'],
      ['GET', '/v1/operations/not-a-ulid'],
      ['GET', '/v1/operations/01arz3ndektsv4rrffq69g5fav'],
      ['GET', '/v1/operations/01ARZ3NDEKTSV4RRFFQ69G5FAV/x'],
      ['DELETE', '/v1/identity'],
      ['GET', '/v2/identity'],
      ['GET', 'http://evil/v1/identity'],
    ];
    for (const [method, target] of tricks) {
      it(`does not route ${method} ${target}`, () => {
        expect(matchRoute(method, target).route).to.equal(null);
      });
    }

    it('routes the exact paths, with the operation id as the only parameter', () => {
      expect(matchRoute('GET', '/v1/identity').route?.operation).to.equal('identity');
      const status = matchRoute('GET', '/v1/operations/01ARZ3NDEKTSV4RRFFQ69G5FAV');
      expect(status.route?.operation).to.equal('operation-status');
      expect(status.route === null ? undefined : status.params.operationId).to.equal(
        '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      );
    });

    it('decides a prober scope from its layer and domain', () => {
      expect(proberScope({ layer: 'version' })).to.equal('versions:read');
      // A supervisor's runtime prober: the route's read scope is enough (contract §5).
      expect(proberScope({ layer: 'runtime' })).to.equal(undefined);
      expect(proberScope({ layer: 'derived' })).to.equal('node-admin:bootstrap');
      expect(proberScope({ layer: 'derived', domain: 'router' })).to.equal('config:read');
    });
  });

  describe('schemas', () => {
    const valid = {
      operationId: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      domain: 'fixture',
      files: [
        {
          fileId: 'app.conf',
          path: '~/.config/fixture/app.conf',
          expectedSha256: null,
          content: 'x',
        },
      ],
      parameters: {},
    };
    it('accepts a valid install request and rejects unknown fields at every level', () => {
      expect(installRequestSchema.safeParse(valid).success).to.equal(true);
      expect(installRequestSchema.safeParse({ ...valid, extra: 1 }).success).to.equal(false);
      const file = { ...valid.files[0], mode: 777 };
      expect(installRequestSchema.safeParse({ ...valid, files: [file] }).success).to.equal(false);
    });
    it('rejects bad ids, paths and hashes', () => {
      for (const bad of [
        { ...valid, operationId: 'x' },
        { ...valid, files: [{ ...valid.files[0], path: '/etc/passwd' }] },
        { ...valid, files: [{ ...valid.files[0], path: '~/../x' }] },
        { ...valid, files: [{ ...valid.files[0], expectedSha256: 'ABC' }] },
        { ...valid, files: [] },
      ]) {
        expect(installRequestSchema.safeParse(bad).success).to.equal(false);
      }
    });
  });

  describe('error vocabulary', () => {
    it('maps every wire code of the catalogue to its HTTP status', () => {
      const expected: Record<string, number> = {
        AUTH_REQUIRED: 401,
        AUTH_INVALID: 401,
        AUTH_EXPIRED: 401,
        AUTH_REVOKED: 401,
        SCOPE_DENIED: 403,
        ORIGIN_REJECTED: 403,
        OP_UNKNOWN: 404,
        BAD_REQUEST: 400,
        REQUEST_TOO_LARGE: 413,
        REQUEST_TIMEOUT: 408,
        REPLAY_REJECTED: 409,
        CLOCK_SKEW: 400,
        PATH_INVALID: 400,
        PATH_OUTSIDE_ROOT: 403,
        SYMLINK_REFUSED: 409,
        NOT_REGULAR_FILE: 409,
        FORMAT_UNSUPPORTED: 415,
        ENCODING_INVALID: 422,
        PRECONDITION_FAILED: 412,
        LOCKED: 423,
        PLAN_MISMATCH: 409,
        IO_NOSPACE: 507,
        IO_ERROR: 500,
        DURABILITY_FAILED: 500,
        AUDIT_UNAVAILABLE: 503,
        ACTION_FAILED: 500,
        ROLLED_BACK: 200,
        RECOVERY_REQUIRED: 503,
      };
      for (const [code, status] of Object.entries(expected)) {
        expect((ERROR_CODES as Record<string, { http?: number }>)[code]?.http, code).to.equal(
          status,
        );
      }
    });
  });

  describe('verifyAuditChain', () => {
    function log(n: number): string[] {
      const lines: string[] = [];
      let prev = '0'.repeat(64);
      for (let seq = 1; seq <= n; seq += 1) {
        const record: AuditRecord = {
          seq,
          ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
          prev,
          operationId: null,
          client: 'abc',
          operation: 'install',
          paths: [`~/f${seq}`],
          files: [],
          outcome: 'ok',
          code: null,
          detail: `entry ${seq}`,
        };
        expect(auditRecordSchema.safeParse(record).success).to.equal(true);
        const line = JSON.stringify(record);
        lines.push(line);
        prev = auditLineHash(line);
      }
      return lines;
    }
    const text = (lines: string[]) => `${lines.join('\n')}\n`;

    it('accepts an intact chain and reports its head', () => {
      const lines = log(5);
      const result = verifyAuditChain(text(lines));
      expect(result.ok).to.equal(true);
      expect(result.entries).to.equal(5);
      expect(result.head).to.deep.equal({ seq: 5, sha256: auditLineHash(lines[4] as string) });
    });

    it('detects an edited entry', () => {
      const lines = log(5);
      lines[2] = (lines[2] as string).replace('entry 3', 'entry 3 (harmless)');
      const result = verifyAuditChain(text(lines));
      expect(result.ok).to.equal(false);
      expect(result.problems.map((p) => [p.kind, p.line])).to.deep.include(['edited', 3]);
    });

    it('detects a removed entry', () => {
      const lines = log(5);
      lines.splice(1, 1);
      const result = verifyAuditChain(text(lines));
      expect(result.problems.map((p) => p.kind)).to.include('removed');
    });

    it('detects reordered entries', () => {
      const lines = log(5);
      [lines[1], lines[2]] = [lines[2] as string, lines[1] as string];
      const result = verifyAuditChain(text(lines));
      expect(result.ok).to.equal(false);
      expect(result.problems.map((p) => p.kind)).to.include('reordered');
    });

    it('detects a removed first entry', () => {
      const lines = log(3).slice(1);
      expect(verifyAuditChain(text(lines)).ok).to.equal(false);
    });

    it('detects a torn last line, from text and from lines', () => {
      const lines = log(3);
      const torn = `${lines.join('\n')}\n${(lines[2] as string).slice(0, 20)}`;
      expect(verifyAuditChain(torn).problems.map((p) => p.kind)).to.deep.equal(['torn']);
      expect(verifyAuditChain([...lines, '{"seq":4,']).problems.map((p) => p.kind)).to.deep.equal([
        'torn',
      ]);
    });

    it('detects an edited or cut tail only against a trusted head', () => {
      const lines = log(4);
      const head = verifyAuditChain(text(lines)).head!;
      const cut = lines.slice(0, 3);
      expect(verifyAuditChain(text(cut)).ok).to.equal(true); // indistinguishable alone
      expect(verifyAuditChain(text(cut), { head }).ok).to.equal(false);
      const edited = [...lines.slice(0, 3), (lines[3] as string).replace('entry 4', 'entry four')];
      expect(verifyAuditChain(text(edited), { head }).problems.map((p) => p.kind)).to.include(
        'edited',
      );
    });
  });
});
