/**
 * Every write names its commit (contract §8.4, issue 36), the pure parts: the commit id's shape,
 * where the wire and the logs accept it, and which node refusal means "this node predates it".
 */
import { expect } from 'chai';
import { FleetError } from '../src/errors.js';
import { refusedRepoCommitKey } from '../src/client/install.js';
import { operatorLogRecord } from '../src/client/operator-log.js';
import { auditRecordSchema } from '../src/wire/audit.js';
import { commitIdSchema } from '../src/wire/protocol.js';
import { receiptSchema } from '../src/wire/receipt.js';
import { installRequestSchema } from '../src/wire/schemas.js';

const SHA1 = 'c0ffee0123456789abcdef0123456789abcdef01';
const SHA256 = `${SHA1}${'0'.repeat(24)}`;

/** Every place a commit id is accepted, with the cases it must take and refuse. */
const COMMIT_CASES: readonly (readonly [string, unknown, boolean])[] = [
  ['a sha-1 commit id (40 hex digits)', SHA1, true],
  ['a sha-256 commit id (64 hex digits)', SHA256, true],
  ['an abbreviation', SHA1.slice(0, 12), false],
  ['41 hex digits', `${SHA1}0`, false],
  ['upper-case hex', SHA1.toUpperCase(), false],
  ['a dirty label', `${SHA1}-dirty`, false],
  ['a ref name', 'HEAD', false],
  ['surrounding whitespace', ` ${SHA1}`, false],
  ['a trailing newline (what git prints)', `${SHA1}\n`, false],
  ['free text', 'rendered on my laptop', false],
  ['the empty string', '', false],
  ['a number', 1234, false],
];

describe('repoCommit: a full commit id, never free text', () => {
  for (const [what, value, accepted] of COMMIT_CASES) {
    it(`${accepted ? 'accepts' : 'refuses'} ${what}`, () => {
      expect(commitIdSchema.safeParse(value).success).to.equal(accepted);
    });
  }
});

describe('repoCommit on the wire and in the logs', () => {
  const request = {
    operationId: '01J0000000000000000000000A',
    domain: 'files',
    files: [{ fileId: 'gitconfig', path: '~/.gitconfig', expectedSha256: null, content: 'x\n' }],
    parameters: {},
  };
  const receipt = {
    schema: 'fleet.receipt/v1',
    operationId: '01J0000000000000000000000A',
    host: 'node-01',
    domain: 'files',
    outcome: 'unchanged',
    files: [],
    actions: [],
    verified: true,
    finishedAt: '2026-12-05T10:00:00.000Z',
    audit: { seq: 3, sha256: 'a'.repeat(64) },
  };
  const record = {
    seq: 3,
    ts: '2026-12-05T10:00:00.000Z',
    prev: 'b'.repeat(64),
    operationId: '01J0000000000000000000000A',
    client: 'laptop',
    operation: 'install',
    paths: ['~/.gitconfig'],
    files: [],
    outcome: 'unchanged',
    code: null,
    detail: 'unchanged: 0 written, 1 unchanged, 0 restored',
  };
  const shapes = [
    ['the install request', installRequestSchema, request],
    ['the receipt', receiptSchema, receipt],
    ['the node audit record', auditRecordSchema, record],
  ] as const;

  for (const [name, schema, base] of shapes) {
    describe(name, () => {
      it('is valid without it (what an operator or node that predates it sends and keeps)', () => {
        expect(schema.safeParse(base).success).to.equal(true);
      });
      it('takes null: the sender read no commit', () => {
        expect(schema.safeParse({ ...base, repoCommit: null }).success).to.equal(true);
      });
      for (const [what, value, accepted] of COMMIT_CASES) {
        it(`${accepted ? 'takes' : 'refuses'} ${what}`, () => {
          expect(schema.safeParse({ ...base, repoCommit: value }).success).to.equal(accepted);
        });
      }
    });
  }

  describe("the operator's log", () => {
    const now = () => new Date('2026-12-05T10:00:00.000Z');
    it('names the commit a verb gave', () => {
      const entry = { verb: 'config install', outcome: 'ok', repoCommit: SHA1 } as const;
      expect(operatorLogRecord(entry, { now }).repoCommit).to.equal(SHA1);
    });
    it('says null for a verb that read none (absent or null)', () => {
      expect(operatorLogRecord({ verb: 'token rotate', outcome: 'ok' }, { now })).to.include({
        repoCommit: null,
      });
      expect(
        operatorLogRecord({ verb: 'drift', outcome: 'ok', repoCommit: null }, { now }).repoCommit,
      ).to.equal(null);
    });
    for (const [what, value, accepted] of COMMIT_CASES.filter(
      ([, value]) => typeof value === 'string',
    )) {
      it(`${accepted ? 'records' : 'refuses to record'} ${what}`, () => {
        const entry = { verb: 'apply', outcome: 'ok', repoCommit: value as string } as const;
        const run = () => operatorLogRecord(entry, { now });
        if (accepted) expect(run().repoCommit).to.equal(value);
        else expect(run).to.throw();
      });
    }
  });
});

describe('refusedRepoCommitKey: only a node that predates the key is asked again', () => {
  const schemaRefusal = (issues: string) =>
    new FleetError('BAD_REQUEST', `node-01: the request body does not match the schema: ${issues}`);
  const cases: readonly (readonly [string, unknown, boolean])[] = [
    ['the key refused as unknown', schemaRefusal('(body): Unrecognized key: "repoCommit"'), true],
    [
      'the key refused among other issues',
      schemaRefusal('files.0.mode: Invalid input; (body): Unrecognized key: "repoCommit"'),
      true,
    ],
    [
      'its value refused by a node that knows it',
      schemaRefusal('repoCommit: must be a full git commit id (40 or 64 hex digits)'),
      false,
    ],
    ['another key refused as unknown', schemaRefusal('(body): Unrecognized key: "mode"'), false],
    [
      'another code naming it',
      new FleetError('PRECONDITION_FAILED', 'Unrecognized key: "repoCommit"'),
      false,
    ],
    ['an error that is no FleetError', new Error('Unrecognized key: "repoCommit"'), false],
    ['not an error', 'BAD_REQUEST repoCommit unrecognized key', false],
  ];
  for (const [what, error, again] of cases) {
    it(`${again ? 'asks again' : 'does not ask again'}: ${what}`, () => {
      expect(refusedRepoCommitKey(error)).to.equal(again);
    });
  }
});
