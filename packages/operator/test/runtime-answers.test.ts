/**
 * What the operator makes of a node's answers in the runtime verbs (contract §12), as tables: the
 * SSH recovery receiver's answer to `apply` (its JSON on stdout, or its refusal on stderr), when a
 * stage sent without the artifact's bytes is sent again with them, the warning for an artifact
 * built from a dirty tree, and how long a transaction is followed. Pure: no SSH, no controller.
 */
import { expect } from 'chai';
import { isFleetError, type ArtifactIdentity } from '@fleet/core';
import {
  followTimeout,
  stepProgress,
  uploadInstead,
  withoutListen,
  withoutSignature,
} from '../src/runtime/apply.js';
import { sendArtifactInstead } from '../src/runtime/recover.js';
import { remoteAcceptanceProblems } from '../src/runtime/accept-remote.js';
import { dirtyWarning } from '../src/runtime/artifact.js';
import { parseReceiverAnswer } from '../src/runtime/bootstrap-plan.js';
import { receiverApplyAnswerSchema } from '../src/runtime/recover.js';

const answer = {
  transaction: '01J0000000000000000000TX01',
  buildId: 'b'.repeat(64),
  treeHash: 'c'.repeat(64),
  reused: false,
  prior: null,
  runner: 4242,
  log: '/home/fleet/.local/state/fleet/runner.log',
};
const json = JSON.stringify(answer);

describe("bootstrap apply --recover: the receiver's answer to apply", () => {
  const notAnswer = {
    code: 'RESPONSE_INVALID',
    exitCode: 5,
    message: "the node's recovery receiver answered apply with something that is not its answer",
  };
  const cases: {
    name: string;
    result: { exitCode: number; stdout: string; stderr: string };
    expected: typeof answer | { code: string; exitCode: number; message: string };
  }[] = [
    {
      name: 'exit 0 with the answer on one line',
      result: { exitCode: 0, stdout: `${json}\n`, stderr: '' },
      expected: answer,
    },
    {
      name: 'exit 0: the last line is the answer, whatever came before it',
      result: { exitCode: 0, stdout: `staging…\n${json}\n\n`, stderr: 'a warning\n' },
      expected: answer,
    },
    {
      name: 'exit 0 with something after the answer',
      result: { exitCode: 0, stdout: `${json}\ndone`, stderr: '' },
      expected: notAnswer,
    },
    {
      name: 'exit 0 with nothing',
      result: { exitCode: 0, stdout: '', stderr: '' },
      expected: notAnswer,
    },
    {
      name: 'exit 0 with JSON null',
      result: { exitCode: 0, stdout: 'null\n', stderr: '' },
      expected: notAnswer,
    },
    {
      name: 'exit 0 with a field the answer does not have',
      result: { exitCode: 0, stdout: JSON.stringify({ ...answer, shell: '/bin/sh' }), stderr: '' },
      expected: notAnswer,
    },
    {
      name: 'exit 0 with a runner pid that is not one',
      result: { exitCode: 0, stdout: JSON.stringify({ ...answer, runner: 0 }), stderr: '' },
      expected: notAnswer,
    },
    {
      name: "a refusal naming fleet's code on its last line keeps that code",
      result: { exitCode: 6, stdout: '', stderr: 'GENERATION_INVALID: the bundle is torn\n' },
      expected: {
        code: 'GENERATION_INVALID',
        exitCode: 6,
        message:
          "the node's recovery receiver refused apply (exit 6): GENERATION_INVALID: the bundle is torn",
      },
    },
    {
      name: 'a refusal is read from the last line of stderr, and stdout is not used',
      result: {
        exitCode: 6,
        stdout: json,
        stderr: 'staging\nNODE_ID_MISMATCH: the plan is for node node-01\n',
      },
      expected: {
        code: 'NODE_ID_MISMATCH',
        exitCode: 6,
        message:
          "the node's recovery receiver refused apply (exit 6): NODE_ID_MISMATCH: the plan is for node node-01",
      },
    },
    {
      name: 'a failure with an upper-case word that is no fleet code is ACTION_FAILED',
      result: { exitCode: 6, stdout: '', stderr: 'Error: HOME_DIR is not writable\n' },
      expected: {
        code: 'ACTION_FAILED',
        exitCode: 6,
        message:
          "the node's recovery receiver refused apply (exit 6): Error: HOME_DIR is not writable",
      },
    },
    {
      name: "the receiver's fleet-error line keeps the node's code and exit, whatever follows it",
      result: {
        exitCode: 4,
        stdout: '',
        stderr: `fleet-error: ${JSON.stringify({ code: 'TLS_FINGERPRINT_MISMATCH', message: "alpha's new controller certificate is sha256:AB, but fleet.yaml pins sha256:CD" })}\nError: alpha's new controller certificate is sha256:AB, but fleet.yaml pins sha256:CD\n  hint: pin it\n`,
      },
      expected: {
        code: 'TLS_FINGERPRINT_MISMATCH',
        exitCode: 4,
        message:
          "the node's recovery receiver refused apply (exit 4): alpha's new controller certificate is sha256:AB, but fleet.yaml pins sha256:CD",
      },
    },
    {
      name: "an older receiver: the Error line's code, not the hint after it",
      result: {
        exitCode: 7,
        stdout: '',
        stderr:
          'Error: BOOTSTRAP_REFUSED: the node policy does not allow it\n  hint: edit bootstrap.allow\n',
      },
      expected: {
        code: 'BOOTSTRAP_REFUSED',
        exitCode: 7,
        message:
          "the node's recovery receiver refused apply (exit 7): Error: BOOTSTRAP_REFUSED: the node policy does not allow it",
      },
    },
    {
      name: 'a fleet-error line with a code fleet does not know is ACTION_FAILED, its message kept',
      result: {
        exitCode: 1,
        stdout: '',
        stderr: `fleet-error: ${JSON.stringify({ code: 'SOMETHING_NEW', message: 'a newer node' })}\n`,
      },
      expected: {
        code: 'ACTION_FAILED',
        exitCode: 6,
        message: "the node's recovery receiver refused apply (exit 1): a newer node",
      },
    },
    {
      name: 'a failure without a message says so',
      result: { exitCode: 6, stdout: '', stderr: '  \n' },
      expected: {
        code: 'ACTION_FAILED',
        exitCode: 6,
        message: "the node's recovery receiver refused apply (exit 6): no message",
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let got: unknown;
      try {
        got = parseReceiverAnswer(c.result, receiverApplyAnswerSchema, 'apply');
      } catch (error) {
        if (!isFleetError(error)) throw error;
        got = { code: error.code, exitCode: error.exitCode, message: error.message };
      }
      expect(got).to.deep.equal(c.expected);
    });
  }
});

describe('upgrade / bootstrap: a stage without the bytes is sent again with them when…', () => {
  const cases: { code: string; message: string; again: boolean; why: string }[] = [
    {
      code: 'GENERATION_NOT_HELD',
      message: 'the node does not hold generation bbbb verified',
      again: true,
      why: 'the node does not hold the generation',
    },
    {
      code: 'BAD_REQUEST',
      message: 'request body: artifact.content: required',
      again: true,
      why: 'the node predates stages without bytes',
    },
    {
      code: 'BAD_REQUEST',
      message: 'request body: transaction: required',
      again: false,
      why: 'not when the bad request is about something else',
    },
    {
      code: 'GENERATION_INVALID',
      message: 'artifact.content does not match its sha256',
      again: false,
      why: 'not when the node refused the generation itself',
    },
    {
      code: 'HOST_UNREACHABLE',
      message: 'connect ECONNREFUSED',
      again: false,
      why: 'not when the node is gone',
    },
    {
      code: 'AUTH_INVALID',
      message: 'token refused',
      again: false,
      why: 'not when the token is refused',
    },
  ];
  for (const c of cases) {
    it(`${c.code} "${c.message}": ${c.again ? 'again, with the bytes' : 'the answer stands'} (${c.why})`, () => {
      expect(uploadInstead({ code: c.code, message: c.message })).to.equal(c.again);
    });
  }
});

describe('bootstrap plan / upgrade: the warning for an artifact built from a dirty tree (contract §1.8)', () => {
  const identity = (commit: string | null): ArtifactIdentity => ({
    file: 'artifacts/fleet-cli-0.2.0.tgz',
    sha256: 'a'.repeat(64),
    bytes: 1000,
    package: '@fleet/cli',
    version: '0.2.0',
    commit,
  });
  const cases: { commit: string | null; warning: string | null }[] = [
    { commit: '9c1e0aa5'.repeat(5), warning: null },
    { commit: null, warning: null },
    { commit: 'dirty-tree-1234', warning: null },
    {
      commit: `${'9c1e0aa5'.repeat(5)}-dirty`,
      warning: `warning: artifacts/fleet-cli-0.2.0.tgz was built from a tree with uncommitted changes (${'9c1e0aa5'.repeat(5)}-dirty): it cannot be reconstructed from its commit (contract §1.8)`,
    },
  ];
  for (const c of cases) {
    it(`commit ${JSON.stringify(c.commit)}: ${c.warning === null ? 'no warning' : 'warns'}`, () => {
      expect(dirtyWarning({ identity: identity(c.commit), bytes: Buffer.alloc(0) })).to.equal(
        c.warning,
      );
    });
  }
});

describe('upgrade / bootstrap: how long a transaction is followed', () => {
  const cases: { acceptanceMs: number; followMs: number }[] = [
    { acceptanceMs: 0, followMs: 180_000 },
    { acceptanceMs: 30_000, followMs: 240_000 },
    { acceptanceMs: 120_000, followMs: 420_000 },
  ];
  for (const c of cases) {
    it(`acceptance ${c.acceptanceMs} ms: followed for ${c.followMs} ms (restart, acceptance, a rollback with its own)`, () => {
      expect(followTimeout(c.acceptanceMs)).to.equal(c.followMs);
    });
  }
});

describe('upgrade / bootstrap: a stage is sent again without listen when… (issue 35)', () => {
  const cases: { code: string; message: string; again: boolean }[] = [
    {
      code: 'BAD_REQUEST',
      message: 'request body: (root): Unrecognized key: "listen"',
      again: true,
    },
    { code: 'BAD_REQUEST', message: 'request body: listen.port: too big', again: true },
    { code: 'BAD_REQUEST', message: 'request body: artifact.content: required', again: false },
    { code: 'BAD_REQUEST', message: 'request body: listener: unknown', again: false },
    { code: 'ACTION_FAILED', message: 'listen EADDRINUSE', again: false },
  ];
  for (const c of cases) {
    it(`${c.code} "${c.message}": ${c.again ? 'again, without it' : 'the answer stands'}`, () => {
      expect(withoutListen(c)).to.equal(c.again);
    });
  }
});

describe('upgrade / bootstrap: a stage is sent again without its signature when… (ADR 0019)', () => {
  const cases: { code: string; message: string; again: boolean }[] = [
    // A node that predates release signatures: its strict schema names the unknown field.
    {
      code: 'BAD_REQUEST',
      message: 'request body: artifact.signature: unknown field',
      again: true,
    },
    // A node that knows signatures and refuses this one: never retried without it.
    {
      code: 'SIGNATURE_INVALID',
      message: 'artifact.signature: not by a trusted key',
      again: false,
    },
    { code: 'ARTIFACT_UNSIGNED', message: 'the artifact is not signed', again: false },
    { code: 'BAD_REQUEST', message: 'request body: artifact.content: unknown field', again: false },
  ];
  for (const c of cases) {
    it(`${c.code} "${c.message}": ${c.again ? 'again, without it' : 'the answer stands'}`, () => {
      expect(withoutSignature(c)).to.equal(c.again);
    });
  }
});

describe('bootstrap --recover: a plan-only bundle is sent again with the artifact when… (issue 35)', () => {
  const cases: { code: string; message: string; again: boolean }[] = [
    { code: 'GENERATION_NOT_HELD', message: 'generation abc is not held here', again: true },
    {
      code: 'GENERATION_INVALID',
      message: 'bootstrap bundle refused: bad header: artifact.held: unknown field',
      again: true,
    },
    {
      code: 'GENERATION_INVALID',
      message: "the bundle's artifact is not the plan's",
      again: false,
    },
    { code: 'SIGNATURE_INVALID', message: 'not signed by a trusted key', again: false },
  ];
  for (const c of cases) {
    it(`${c.code} "${c.message}": ${c.again ? 'again, with the artifact' : 'the answer stands'}`, () => {
      expect(sendArtifactInstead(c)).to.equal(c.again);
    });
  }
});

describe("bootstrap / upgrade: acceptance from the operator's seat (issue 35)", () => {
  const target = {
    nodeId: 'alpha',
    package: '@fleet/cli',
    version: '1.0.0',
    build: { sha256: 'a'.repeat(64), commit: 'c1' },
    protocol: { min: 2, max: 2 },
    catalog: { domains: [], probers: [], bootstrapAdapters: ['systemd-user'] },
  };
  const cases: {
    name: string;
    identity: { nodeId: string; build: { sha256: string | null; commit: string | null } };
    problems: string[];
  }[] = [
    {
      name: 'the target',
      identity: { nodeId: 'alpha', build: { sha256: 'a'.repeat(64), commit: 'c1' } },
      problems: [],
    },
    {
      name: 'another node behind the URL',
      identity: { nodeId: 'beta', build: { sha256: 'a'.repeat(64), commit: 'c1' } },
      problems: ['node id beta, not alpha'],
    },
    {
      name: 'the old build still answering there',
      identity: { nodeId: 'alpha', build: { sha256: 'b'.repeat(64), commit: 'c0' } },
      problems: [`build ${'b'.repeat(12)}, not ${'a'.repeat(12)}`],
    },
    {
      name: 'a development build',
      identity: { nodeId: 'alpha', build: { sha256: null, commit: null } },
      problems: [`build (development build), not ${'a'.repeat(12)}`],
    },
    {
      name: 'the same build from another commit label',
      identity: { nodeId: 'alpha', build: { sha256: 'a'.repeat(64), commit: 'c1-dirty' } },
      problems: ['build commit c1-dirty, not c1'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.problems.length === 0 ? 'accepted' : 'refused'}`, () => {
      expect(remoteAcceptanceProblems(target, c.identity)).to.deep.equal(c.problems);
    });
  }
});

describe('bootstrap / upgrade: progress while the node works (issue 35 item 3)', () => {
  it('each new step once, then a line every 10 s of the same step', () => {
    const lines: string[] = [];
    let now = 0;
    const onStatus = stepProgress(
      (line) => lines.push(line),
      () => now,
    );
    const steps = [
      { seq: 1, at: '', step: 'begin', detail: 'upgrade' },
      { seq: 2, at: '', step: 'staged', detail: 'b' },
      { seq: 3, at: '', step: 'activated', detail: 'current -> b' },
      {
        seq: 4,
        at: '',
        step: 'supervisor-restarted',
        detail: 'systemd-user restarted the runtime',
      },
      { seq: 5, at: '', step: 'accepted', detail: 'b' },
    ];
    const at = (t: number, upTo: number, id = 'T1') => {
      now = t;
      onStatus({ transaction: { id, steps: steps.slice(0, upTo) } } as never);
    };
    at(0, 3);
    at(1_000, 3);
    at(2_000, 4);
    at(9_000, 4);
    at(12_500, 4);
    at(20_000, 4);
    at(23_000, 4);
    expect(lines).to.deep.equal([
      'transaction T1: begin: upgrade',
      'transaction T1: staged: b',
      'transaction T1: activated: current -> b',
      'transaction T1: supervisor-restarted: systemd-user restarted the runtime',
      'transaction T1: still after supervisor-restarted: waited 11 s',
      'transaction T1: still after supervisor-restarted: waited 21 s',
    ]);
  });

  it('the steps a poll missed, in order, each naming its transaction (issue 36 item 5)', () => {
    const lines: string[] = [];
    const onStatus = stepProgress((line) => lines.push(line));
    const step = (seq: number, name: string) => ({ seq, at: '', step: name, detail: name });
    onStatus({ transaction: { id: 'T1', steps: [step(1, 'begin'), step(2, 'staged')] } } as never);
    onStatus({
      transaction: {
        id: 'T1',
        steps: [1, 2, 3, 4, 5, 6].map((seq) =>
          step(
            seq,
            ['begin', 'staged', 'activated', 'supervisor-restarted', 'accepted', 'end'][
              seq - 1
            ] as string,
          ),
        ),
      },
    } as never);
    onStatus({ transaction: { id: 'T2', steps: [step(7, 'begin')] } } as never);
    expect(lines).to.deep.equal([
      'transaction T1: begin: begin',
      'transaction T1: staged: staged',
      'transaction T1: activated: activated',
      'transaction T1: supervisor-restarted: supervisor-restarted',
      'transaction T1: accepted: accepted',
      'transaction T1: end: end',
      'transaction T2: begin: begin',
    ]);
  });
});
