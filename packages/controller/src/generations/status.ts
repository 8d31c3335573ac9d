/**
 * Runtime status (contract §12): pure. The journal says what was intended and which steps were done;
 * only observation — the `current` pointer, the supervisor, the live identity — says what runs.
 * A journal that says "accepted" is reported `accepted` only when the runtime that answers is
 * that generation and passes acceptance again; otherwise the disagreement is `inconsistent`.
 *
 * | journal                                   | observation                                  | state                     |
 * |-------------------------------------------|----------------------------------------------|---------------------------|
 * | corrupt (bad checksum, gap, disorder)     | anything                                     | manual-recovery-required  |
 * | empty, or last transaction ended `failed` | pointer, supervisor, identity agree          | idle                      |
 * | ended `accepted` (kind upgrade/bootstrap) | pointer = supervisor = live = target, accepts| accepted                  |
 * | ended `accepted` (kind rollback)          | same, for its target                         | rolled-back               |
 * | ended `rolled-back`                       | pointer = supervisor = live = prior, accepts | rolled-back               |
 * | `manual-recovery-required`                | anything                                     | manual-recovery-required  |
 * | open transaction                          | pointer is the prior or a staged target      | in-progress               |
 * | any of the above                          | anything else                                | inconsistent              |
 *
 * For an open transaction `next` says what recovery should do when no process is working on it
 * (`busy` false): `abort` (nothing was activated), `resume-acceptance` (the target runs and
 * passes acceptance — also for one journaled `accepted` and never ended, whose state stays
 * `accepted`), `rollback` (anything else).
 */
import type { IdentityResponse, ObservedSupervisor, PointerState } from '@fleet/core/node';
import { acceptRuntime, describeFailures, type RuntimeExpectation } from './acceptance.js';
import {
  lastTransaction,
  type JournalStep,
  type ParsedJournal,
  type TransactionKind,
  type TransactionOutcome,
} from './journal.js';

export type RuntimeState =
  'idle' | 'in-progress' | 'accepted' | 'rolled-back' | 'manual-recovery-required' | 'inconsistent';

export interface RuntimeObservation {
  readonly pointer: PointerState;
  /** What the supervisor reports; `null` when it could not be asked. */
  readonly supervisor: ObservedSupervisor | null;
  /** The live `GET /v1/identity`; `null` when no runtime answered. */
  readonly identity: IdentityResponse | null;
  /** A live process holds the runtime lock: the open transaction is being worked on now. */
  readonly busy?: boolean;
}

export type NextAction = 'none' | 'wait' | 'abort' | 'resume-acceptance' | 'rollback' | 'operator';

export interface RuntimeStatus {
  readonly state: RuntimeState;
  readonly journal: 'empty' | 'ok' | 'torn-tail' | 'corrupt';
  readonly transaction: {
    readonly id: string;
    readonly kind: TransactionKind;
    readonly target: string;
    readonly prior: string | null;
    readonly lastStep: JournalStep;
    readonly outcome: TransactionOutcome | null;
  } | null;
  /** The generation each observer names (`null`: none, unknown or not running). */
  readonly observed: {
    readonly pointer: string | null;
    readonly supervisor: string | null;
    readonly live: string | null;
  };
  readonly next: NextAction;
  /** Why the state is what it is when it is not plainly healthy (one line each). */
  readonly problems: readonly string[];
  /** `RECOVERY_REQUIRED` when the journal cannot be trusted. */
  readonly code: 'RECOVERY_REQUIRED' | null;
}

const short = (id: string | null): string => (id === null ? '(none)' : id.slice(0, 12));

/** Checks that every observer names `buildId` and the live runtime passes `expectation`. */
function confirm(
  observation: RuntimeObservation,
  buildId: string,
  expectation: RuntimeExpectation | null,
  what: string,
): string[] {
  const problems: string[] = [];
  const pointer = observation.pointer.state === 'set' ? observation.pointer.buildId : null;
  if (pointer !== buildId)
    problems.push(
      `the journal says ${what} ${short(buildId)}, but current points at ${short(pointer)}`,
    );
  const supervisor = observation.supervisor;
  if (supervisor === null) problems.push('the supervisor could not be asked');
  else {
    if (!supervisor.running)
      problems.push(`the supervisor reports the runtime not running (${supervisor.state})`);
    if (supervisor.generation !== undefined && supervisor.generation !== buildId) {
      problems.push(`the supervisor runs ${short(supervisor.generation)}, not ${short(buildId)}`);
    }
  }
  if (observation.identity === null)
    problems.push(`no live runtime answered: ${what} is not confirmed`);
  else if (expectation) {
    const acceptance = acceptRuntime(expectation, observation.identity);
    problems.push(...describeFailures(acceptance.failures).map((line) => `live runtime: ${line}`));
  } else if (observation.identity.build.sha256 !== buildId) {
    problems.push(
      `the live runtime is ${short(observation.identity.build.sha256)}, not ${short(buildId)}`,
    );
  }
  return problems;
}

export function reconcileStatus(
  journal: ParsedJournal,
  observation: RuntimeObservation,
): RuntimeStatus {
  const pointer = observation.pointer.state === 'set' ? observation.pointer.buildId : null;
  const supervisorGeneration =
    observation.supervisor?.running && observation.supervisor.generation !== undefined
      ? observation.supervisor.generation
      : null;
  const live = observation.identity?.build.sha256 ?? null;
  const observed = { pointer, supervisor: supervisorGeneration, live };
  const journalState = journal.corrupt
    ? ('corrupt' as const)
    : journal.torn
      ? ('torn-tail' as const)
      : journal.records.length === 0
        ? ('empty' as const)
        : ('ok' as const);
  const base = { journal: journalState, observed, code: null };

  if (journal.corrupt) {
    return {
      ...base,
      state: 'manual-recovery-required',
      transaction: null,
      next: 'operator',
      problems: [
        `the runtime journal is corrupt at line ${journal.corrupt.line}: ${journal.corrupt.reason}`,
      ],
      code: 'RECOVERY_REQUIRED',
    };
  }
  const pointerProblems =
    observation.pointer.state === 'invalid'
      ? [`current is invalid: ${observation.pointer.detail}`]
      : [];

  const txn = lastTransaction(journal);
  if (txn === null) {
    const problems = [...pointerProblems];
    if (supervisorGeneration !== null && pointer !== null && supervisorGeneration !== pointer) {
      problems.push(
        `the supervisor runs ${short(supervisorGeneration)} but current points at ${short(pointer)}`,
      );
    }
    if (observation.identity !== null && pointer !== null && live !== pointer) {
      problems.push(`the live runtime is ${short(live)} but current points at ${short(pointer)}`);
    }
    return {
      ...base,
      state: problems.length ? 'inconsistent' : 'idle',
      transaction: null,
      next: problems.length ? 'operator' : 'none',
      problems,
    };
  }

  const { kind, target, prior } = txn.begin.data;
  const targetId = target.build.sha256;
  const priorId = prior?.build.sha256 ?? null;
  const terminal = [...txn.records]
    .reverse()
    .find((r) => ['accepted', 'rolled-back', 'manual-recovery-required'].includes(r.step));
  const endOutcome = txn.find('end')?.data.outcome ?? null;
  const transaction = {
    id: txn.id,
    kind,
    target: targetId,
    prior: priorId,
    lastStep: txn.last.step,
    outcome: endOutcome ?? (terminal?.step as TransactionOutcome | undefined) ?? null,
  };
  const result = (state: RuntimeState, next: NextAction, problems: string[]): RuntimeStatus => ({
    ...base,
    state:
      problems.length > 0 && state !== 'manual-recovery-required' && state !== 'in-progress'
        ? 'inconsistent'
        : state,
    transaction,
    next:
      problems.length > 0 && state !== 'in-progress' && state !== 'manual-recovery-required'
        ? 'operator'
        : next,
    problems,
  });

  if (terminal?.step === 'manual-recovery-required') {
    return result('manual-recovery-required', 'operator', [
      `recorded: ${terminal.data.reason}`,
      ...pointerProblems,
    ]);
  }
  if (terminal?.step === 'accepted') {
    // Accepted but never ended, nobody working on it (its runner died after `accepted`): the
    // journal is closed by resuming it (issue 36, `fleet upgrade HOST --resume`).
    const unended = !txn.ended && !observation.busy && kind !== 'rollback';
    return result(
      kind === 'rollback' ? 'rolled-back' : 'accepted',
      unended ? 'resume-acceptance' : 'none',
      [...pointerProblems, ...confirm(observation, targetId, target, 'accepted')],
    );
  }
  if (terminal?.step === 'rolled-back') {
    if (priorId === null) {
      return result('inconsistent', 'operator', [
        'rolled back, but the transaction had no prior generation',
      ]);
    }
    return result('rolled-back', 'none', [
      ...pointerProblems,
      ...confirm(observation, priorId, prior, 'rolled back to'),
    ]);
  }
  if (txn.ended) {
    // ended `failed` before anything was activated: the prior should still be what runs
    if (priorId === null) {
      const problems =
        pointer !== null ? [`nothing was activated, yet current points at ${short(pointer)}`] : [];
      return result('idle', 'none', [...pointerProblems, ...problems]);
    }
    return result('idle', 'none', [
      ...pointerProblems,
      ...confirm(observation, priorId, prior, 'kept'),
    ]);
  }

  // An open transaction.
  const problems: string[] = [...pointerProblems];
  if (pointer !== priorId && pointer !== targetId) {
    problems.push(
      `current points at ${short(pointer)}, neither the prior ${short(priorId)} nor the target ${short(targetId)}`,
    );
  } else if (
    pointer === targetId &&
    pointer !== priorId &&
    kind !== 'rollback' &&
    !txn.has('staged')
  ) {
    problems.push(
      `current points at the target ${short(targetId)}, which the journal never recorded as staged`,
    );
  }
  if (problems.length > 0) {
    return { ...base, state: 'inconsistent', transaction, next: 'operator', problems };
  }
  let next: NextAction;
  if (observation.busy) next = 'wait';
  else if (txn.last.step === 'failed') next = 'rollback';
  else if (
    pointer === targetId &&
    observation.identity !== null &&
    acceptRuntime(target, observation.identity).accepted
  ) {
    next = 'resume-acceptance';
  } else if (pointer === priorId && !txn.has('activated')) next = 'abort';
  else next = 'rollback';
  return { ...base, state: 'in-progress', transaction, next, problems: [] };
}
