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
import { lastTransaction, type ParsedJournal, type Transaction } from './journal.js';
import type {
  JournalRecord,
  JournalStep,
  RecordOf,
  TransactionKind,
  TransactionOutcome,
} from './journal-record.js';

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

/** The fields every status carries, whatever its state (their key order is the wire's). */
interface StatusBase {
  readonly journal: RuntimeStatus['journal'];
  readonly observed: RuntimeStatus['observed'];
  readonly code: null;
}

type TransactionSummary = NonNullable<RuntimeStatus['transaction']>;

/** A record that settles a transaction; the last one recorded decides its state. */
type TerminalRecord = RecordOf<'accepted' | 'rolled-back' | 'manual-recovery-required'>;

/** What reconciling the last transaction reads, gathered once. */
interface TransactionView {
  readonly base: StatusBase;
  readonly observation: RuntimeObservation;
  /** The invalid `current` pointer's problem, reported alongside any other. */
  readonly pointerProblems: readonly string[];
  readonly txn: Transaction;
  readonly transaction: TransactionSummary;
}

function observedGenerations(observation: RuntimeObservation): RuntimeStatus['observed'] {
  const pointer = observation.pointer.state === 'set' ? observation.pointer.buildId : null;
  const supervisor =
    observation.supervisor?.running && observation.supervisor.generation !== undefined
      ? observation.supervisor.generation
      : null;
  const live = observation.identity?.build.sha256 ?? null;
  return { pointer, supervisor, live };
}

function journalHealth(journal: ParsedJournal): RuntimeStatus['journal'] {
  if (journal.corrupt) return 'corrupt';
  if (journal.torn) return 'torn-tail';
  return journal.records.length === 0 ? 'empty' : 'ok';
}

function corruptStatus(
  base: StatusBase,
  corrupt: NonNullable<ParsedJournal['corrupt']>,
): RuntimeStatus {
  return {
    ...base,
    state: 'manual-recovery-required',
    transaction: null,
    next: 'operator',
    problems: [`the runtime journal is corrupt at line ${corrupt.line}: ${corrupt.reason}`],
    code: 'RECOVERY_REQUIRED',
  };
}

/** No transaction was ever journaled: the observers only have to agree with each other. */
function statusWithoutTransaction(
  base: StatusBase,
  observation: RuntimeObservation,
  pointerProblems: readonly string[],
): RuntimeStatus {
  const { pointer, supervisor, live } = base.observed;
  const problems = [...pointerProblems];
  if (supervisor !== null && pointer !== null && supervisor !== pointer) {
    problems.push(
      `the supervisor runs ${short(supervisor)} but current points at ${short(pointer)}`,
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

function isTerminal(record: JournalRecord): record is TerminalRecord {
  return (
    record.step === 'accepted' ||
    record.step === 'rolled-back' ||
    record.step === 'manual-recovery-required'
  );
}

function summarizeTransaction(
  txn: Transaction,
  terminal: TerminalRecord | undefined,
): TransactionSummary {
  const { kind, target, prior } = txn.begin.data;
  const endOutcome = txn.find('end')?.data.outcome ?? null;
  return {
    id: txn.id,
    kind,
    target: target.build.sha256,
    prior: prior?.build.sha256 ?? null,
    lastStep: txn.last.step,
    outcome: endOutcome ?? terminal?.step ?? null,
  };
}

/**
 * The status for `state`, unless observation disagrees: then `inconsistent`, for the operator.
 * An in-progress or manual-recovery state keeps its own name and next step with its problems.
 */
function verdict(
  view: TransactionView,
  state: RuntimeState,
  next: NextAction,
  problems: string[],
): RuntimeStatus {
  return {
    ...view.base,
    state:
      problems.length > 0 && state !== 'manual-recovery-required' && state !== 'in-progress'
        ? 'inconsistent'
        : state,
    transaction: view.transaction,
    next:
      problems.length > 0 && state !== 'in-progress' && state !== 'manual-recovery-required'
        ? 'operator'
        : next,
    problems,
  };
}

/** The transaction recorded an outcome: observation must confirm the generation it names. */
function terminalStatus(view: TransactionView, terminal: TerminalRecord): RuntimeStatus {
  const { observation, pointerProblems, txn } = view;
  const { kind, target, prior } = txn.begin.data;
  const { target: targetId, prior: priorId } = view.transaction;
  switch (terminal.step) {
    case 'manual-recovery-required':
      return verdict(view, 'manual-recovery-required', 'operator', [
        `recorded: ${terminal.data.reason}`,
        ...pointerProblems,
      ]);
    case 'accepted': {
      // Accepted but never ended, nobody working on it (its runner died after `accepted`): the
      // journal is closed by resuming it (issue 36, `fleet upgrade HOST --resume`).
      const unended = !txn.ended && !observation.busy && kind !== 'rollback';
      return verdict(
        view,
        kind === 'rollback' ? 'rolled-back' : 'accepted',
        unended ? 'resume-acceptance' : 'none',
        [...pointerProblems, ...confirm(observation, targetId, target, 'accepted')],
      );
    }
    case 'rolled-back':
      if (priorId === null) {
        return verdict(view, 'inconsistent', 'operator', [
          'rolled back, but the transaction had no prior generation',
        ]);
      }
      return verdict(view, 'rolled-back', 'none', [
        ...pointerProblems,
        ...confirm(observation, priorId, prior, 'rolled back to'),
      ]);
  }
}

/** Ended `failed` before anything was activated: the prior should still be what runs. */
function endedWithoutOutcomeStatus(view: TransactionView): RuntimeStatus {
  const { observation, pointerProblems } = view;
  const { prior } = view.txn.begin.data;
  const priorId = view.transaction.prior;
  const pointer = view.base.observed.pointer;
  if (priorId === null) {
    const problems =
      pointer !== null ? [`nothing was activated, yet current points at ${short(pointer)}`] : [];
    return verdict(view, 'idle', 'none', [...pointerProblems, ...problems]);
  }
  return verdict(view, 'idle', 'none', [
    ...pointerProblems,
    ...confirm(observation, priorId, prior, 'kept'),
  ]);
}

/** An open transaction is consistent while `current` names its prior or its staged target. */
function openTransactionProblems(view: TransactionView): string[] {
  const { txn, pointerProblems } = view;
  const { target: targetId, prior: priorId, kind } = view.transaction;
  const pointer = view.base.observed.pointer;
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
  return problems;
}

/** What recovery should do with an open transaction nobody is working on (module comment). */
function openTransactionNext(view: TransactionView): NextAction {
  const { observation, txn } = view;
  const { target: targetId, prior: priorId } = view.transaction;
  const pointer = view.base.observed.pointer;
  if (observation.busy) return 'wait';
  if (txn.last.step === 'failed') return 'rollback';
  if (
    pointer === targetId &&
    observation.identity !== null &&
    acceptRuntime(txn.begin.data.target, observation.identity).accepted
  ) {
    return 'resume-acceptance';
  }
  if (pointer === priorId && !txn.has('activated')) return 'abort';
  return 'rollback';
}

function openTransactionStatus(view: TransactionView): RuntimeStatus {
  const { base, transaction } = view;
  const problems = openTransactionProblems(view);
  if (problems.length > 0) {
    return { ...base, state: 'inconsistent', transaction, next: 'operator', problems };
  }
  const next = openTransactionNext(view);
  return { ...base, state: 'in-progress', transaction, next, problems: [] };
}

export function reconcileStatus(
  journal: ParsedJournal,
  observation: RuntimeObservation,
): RuntimeStatus {
  const base: StatusBase = {
    journal: journalHealth(journal),
    observed: observedGenerations(observation),
    code: null,
  };
  if (journal.corrupt) return corruptStatus(base, journal.corrupt);
  const pointerProblems =
    observation.pointer.state === 'invalid'
      ? [`current is invalid: ${observation.pointer.detail}`]
      : [];

  const txn = lastTransaction(journal);
  if (txn === null) return statusWithoutTransaction(base, observation, pointerProblems);

  const terminal = [...txn.records].reverse().find(isTerminal);
  const view: TransactionView = {
    base,
    observation,
    pointerProblems,
    txn,
    transaction: summarizeTransaction(txn, terminal),
  };
  if (terminal !== undefined) return terminalStatus(view, terminal);
  if (txn.ended) return endedWithoutOutcomeStatus(view);
  return openTransactionStatus(view);
}
