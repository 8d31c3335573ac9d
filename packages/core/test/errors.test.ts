import { expect } from 'chai';
import {
  ERROR_CODES,
  ExitCode,
  FleetError,
  describeCode,
  errorEnvelope,
  formatProblem,
  isFleetError,
  mostUrgentExit,
  usageErrorMessage,
  type ErrorCode,
  type MissingArg,
  type Problem,
} from '../src/errors.js';

describe('errors', () => {
  describe('FleetError', () => {
    it('carries code, exit code, problems, suggestions and cause', () => {
      const cause = new Error('root cause');
      const problems: Problem[] = [{ file: 'fleet.yaml', line: 3, message: 'bad' }];
      const error = new FleetError('FLEET_YAML_INVALID', 'fleet.yaml is invalid', {
        problems,
        suggestions: ['fix it'],
        cause,
      });
      expect(error).to.be.instanceOf(Error);
      expect(error.name).to.equal('FleetError');
      expect(error.message).to.equal('fleet.yaml is invalid');
      expect(error.code).to.equal('FLEET_YAML_INVALID');
      expect(error.exitCode).to.equal(2);
      expect(error.problems).to.deep.equal(problems);
      expect(error.suggestions).to.deep.equal(['fix it']);
      expect(error.cause).to.equal(cause);
    });

    it('defaults to no problems, no suggestions and no cause', () => {
      const error = new FleetError('USAGE', 'bad flag');
      expect(error.problems).to.deep.equal([]);
      expect(error.suggestions).to.deep.equal([]);
      expect(error).to.not.have.own.property('cause');
    });
  });

  describe('isFleetError (no instanceof across plugin copies)', () => {
    const brand = Symbol.for('fleet.error');
    /** What a FleetError from another copy of this module looks like. */
    class ForeignFleetError extends Error {
      readonly [brand] = true;
      constructor(
        readonly code: string,
        readonly exitCode: number,
      ) {
        super('from another copy');
      }
    }

    const cases: [title: string, value: unknown, expected: boolean][] = [
      ['a FleetError', new FleetError('LOCKED', 'held'), true],
      ['a FleetError from another copy of the module', new ForeignFleetError('LOCKED', 3), true],
      [
        'a plain branded object',
        { [brand]: true, code: 'UNKNOWN_HOST', message: 'm', exitCode: 2 },
        true,
      ],
      ['a plain Error', new Error('boom'), false],
      [
        'an Error with a code (like ENOENT)',
        Object.assign(new Error('x'), { code: 'ENOENT', exitCode: 1 }),
        false,
      ],
      [
        'an unbranded object with a fleet code',
        { code: 'LOCKED', message: 'm', exitCode: 3 },
        false,
      ],
      [
        'a branded object with an unknown code',
        { [brand]: true, code: 'NOPE', exitCode: 2 },
        false,
      ],
      [
        'a branded object with an inherited name as code',
        { [brand]: true, code: 'toString', exitCode: 2 },
        false,
      ],
      ['a branded object without an exit code', { [brand]: true, code: 'LOCKED' }, false],
      ['a brand that is not true', { [brand]: 'yes', code: 'LOCKED', exitCode: 3 }, false],
      [
        'a local (non-registered) symbol brand',
        { [Symbol('fleet.error')]: true, code: 'LOCKED', exitCode: 3 },
        false,
      ],
      ['null', null, false],
      ['undefined', undefined, false],
      ['a string', 'LOCKED', false],
    ];
    for (const [title, value, expected] of cases) {
      it(`${expected ? 'recognises' : 'rejects'} ${title}`, () => {
        expect(isFleetError(value)).to.equal(expected);
      });
    }
  });

  describe('exit codes (contract §7) and HTTP statuses (catalogue §2)', () => {
    // HTTP is asserted only for the controller vocabulary of catalogue §2; operator-side codes
    // may or may not have a status, which neither document fixes.
    const cases: [code: ErrorCode, exit: number, http?: number][] = [
      ['USAGE', 2],
      ['FLEET_YAML_INVALID', 2],
      ['UNKNOWN_HOST', 2],
      ['UNKNOWN_DOMAIN', 2],
      ['RENDER_FAILED', 2],
      ['BAD_REQUEST', 2, 400],
      ['PATH_INVALID', 2, 400],
      ['OP_UNKNOWN', 2, 404],
      ['REQUEST_TOO_LARGE', 2, 413],
      ['PRECONDITION_FAILED', 3, 412],
      ['LOCKED', 3, 423],
      ['PLAN_MISMATCH', 3, 409],
      ['REPLAY_REJECTED', 3, 409],
      ['NO_PRIOR_GENERATION', 3],
      ['AUTH_REQUIRED', 4, 401],
      ['AUTH_INVALID', 4, 401],
      ['AUTH_EXPIRED', 4, 401],
      ['AUTH_REVOKED', 4, 401],
      ['SCOPE_DENIED', 4, 403],
      ['CREDENTIALS_INSECURE', 4],
      ['HOST_UNREACHABLE', 5],
      ['VERIFICATION_FAILED', 6],
      ['ROLLED_BACK', 6, 200],
      ['IO_NOSPACE', 6, 507],
      ['AUDIT_UNAVAILABLE', 6, 503],
      ['DIVERGED', 7],
      ['SECRET_FOUND', 7],
      ['PATH_OUTSIDE_ROOT', 7, 403],
      ['SYMLINK_REFUSED', 7, 409],
      ['FORMAT_UNSUPPORTED', 7, 415],
      ['ENCODING_INVALID', 7, 422],
      ['MARKERS_UNPAIRED', 7, 409],
      ['INTERNAL', 1, 500],
    ];
    for (const [code, exit, http] of cases) {
      it(`${code} → exit ${exit}${http === undefined ? '' : `, HTTP ${http}`}`, () => {
        const described = describeCode(code);
        expect(described.exitCode).to.equal(exit);
        if (http !== undefined) expect(described.http).to.equal(http);
        expect(new FleetError(code, 'x').exitCode).to.equal(exit);
      });
    }

    it('every code maps to one of the exit codes of contract §7', () => {
      const allowed = new Set<number>(Object.values(ExitCode));
      expect([...allowed].sort()).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
      for (const [code, spec] of Object.entries(ERROR_CODES)) {
        expect(allowed.has(spec.exit), code).to.equal(true);
        expect(spec.exit, `${code} must not claim success`).to.not.equal(0);
      }
    });
  });

  describe('mostUrgentExit (contract §7: across hosts the most urgent code wins)', () => {
    const cases: [title: string, codes: number[], expected: number][] = [
      ['no hosts', [], 0],
      ['every host current', [0, 0, 0], 0],
      ['drift on one host', [0, 1, 0], 1],
      ['unreachable over drift', [1, 5, 0], 5],
      ['denied over unreachable and drift', [1, 5, 4, 0], 4],
      ['denied over drift, in any order', [4, 1], 4],
      ['a refusal (7) over drift, under unreachable', [1, 7], 7],
      ['unreachable over a refusal', [7, 5], 5],
      ['a precondition (3) over drift', [1, 3], 3],
      ['denied and unreachable over a failed verification', [4, 5, 6, 1], 4],
      ['a failed verification over a precondition, a refusal and drift', [3, 7, 6, 1], 6],
      ['a precondition (something moved) over a refusal', [7, 3], 3],
      ['an unknown code ranks as drift', [9, 0], 9],
      ['drift before an unknown code keeps drift', [1, 9], 1],
    ];
    for (const [title, codes, expected] of cases) {
      it(`${title}: [${codes.join(', ')}] → ${expected}`, () => {
        expect(mostUrgentExit(codes)).to.equal(expected);
      });
    }
  });

  describe('usageErrorMessage: one line, naming what is missing', () => {
    const cases: [
      title: string,
      message: string,
      args: MissingArg[] | undefined,
      expected: string,
    ][] = [
      [
        'a missing argument with its description',
        'Missing 1 required arg:\npath  the file\nSee more help with --help',
        [{ name: 'path', description: 'the file' }],
        'Missing 1 required arg: path — the file',
      ],
      [
        'two, one without a description',
        'Missing 2 required args:\nhost  the host\npath\nSee more help with --help',
        [{ name: 'host', description: 'the host' }, { name: 'path' }],
        'Missing 2 required args: host — the host; path',
      ],
      [
        'a flag problem, headline and help line dropped',
        'The following errors occurred:\n  --every must be a duration\nSee more help with --help',
        undefined,
        '--every must be a duration',
      ],
      ['a one-line error', 'Error: Nonexistent flag: --x', undefined, 'Nonexistent flag: --x'],
      ['nothing at all', '\n\n', undefined, 'usage error'],
    ];
    for (const [title, message, args, expected] of cases) {
      it(title, () => {
        expect(usageErrorMessage(message, args)).to.equal(expected);
      });
    }
  });

  describe('errorEnvelope', () => {
    it('is { error: { code, message, exitCode } } without empty lists', () => {
      const envelope = new FleetError('UNKNOWN_HOST', 'unknown host "x"').toEnvelope();
      expect(envelope).to.deep.equal({
        error: { code: 'UNKNOWN_HOST', message: 'unknown host "x"', exitCode: 2 },
      });
      expect(JSON.parse(JSON.stringify(envelope))).to.deep.equal(envelope);
    });

    it('includes problems and suggestions when there are some', () => {
      const problems = [{ file: 'f', line: 1, message: 'm' }];
      const envelope = errorEnvelope(
        new FleetError('REPO_INVALID', 'bad', { problems, suggestions: ['fleet validate'] }),
      );
      expect(envelope).to.deep.equal({
        error: {
          code: 'REPO_INVALID',
          message: 'bad',
          exitCode: 2,
          problems,
          suggestions: ['fleet validate'],
        },
      });
    });

    it('works on a structural error from another copy of the module', () => {
      const envelope = errorEnvelope({ code: 'LOCKED', message: 'held', exitCode: 3 });
      expect(envelope).to.deep.equal({ error: { code: 'LOCKED', message: 'held', exitCode: 3 } });
    });

    it('never carries the cause or the stack', () => {
      const error = new FleetError('INTERNAL', 'bug', { cause: new Error('secret-ish detail') });
      const text = JSON.stringify(error.toEnvelope());
      expect(text).to.not.contain('secret-ish').and.not.contain('stack').and.not.contain('.js:');
    });
  });

  describe('formatProblem', () => {
    const cases: [problem: Problem, expected: string][] = [
      [
        { file: 'fleet.yaml', line: 7, path: 'hosts.alpha.colour', message: 'unknown field' },
        'fleet.yaml:7: hosts.alpha.colour: unknown field',
      ],
      [{ file: 'fleet.yaml', line: 7, message: 'bad' }, 'fleet.yaml:7: bad'],
      [{ file: 'fleet.yaml', path: 'hosts', message: 'bad' }, 'fleet.yaml: hosts: bad'],
      [{ file: 'hosts/a.yaml', message: 'bad' }, 'hosts/a.yaml: bad'],
      [{ line: 3, message: 'bad' }, '3: bad'],
      [{ path: 'installers[0].domain', message: 'bad' }, 'installers[0].domain: bad'],
      [{ message: 'just this' }, 'just this'],
      [{ file: 'f', line: 0, message: 'm' }, 'f:0: m'],
    ];
    for (const [problem, expected] of cases) {
      it(JSON.stringify(expected), () => {
        expect(formatProblem(problem)).to.equal(expected);
      });
    }
  });
});
