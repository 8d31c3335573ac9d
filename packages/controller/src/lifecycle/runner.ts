/**
 * The runtime runner (contract §12): the detached process that carries a transaction past the
 * restart of the controller that opened it. It holds the runtime lock for the whole transaction
 * and journals every step durably before the next one starts:
 *
 *   activate:  flip `current` → install the supervisor definition for the target → restart →
 *              acceptance (exact node id, package and build, protocol, catalog, health, within a
 *              timeout) → `accepted`; any failure → `failed` → verified rollback.
 *   resume:    an interrupted transaction whose runner died after `activated` (issue 36): the
 *              live runtime accepted again by the same checks → `accepted` + `end`; not accepted →
 *              `failed` → the same verified rollback.
 *   rollback:  `current` back to the prior generation (only one whose tree hash verifies) →
 *              definition → restart → the prior runtime accepted by the same checks →
 *              `rolled-back`; when that is impossible or fails: the runtime is stopped (not left
 *              restarting in a loop) and `manual-recovery-required`, journal and logs kept.
 *
 * Acceptance asks the live runtime's `GET /v1/identity` with a short-lived token the runner
 * issues into the node's own token store (scope `versions:read`) and revokes at the end.
 *
 * This module holds the transaction's steps and their journal; its parts are siblings: the
 * supervisor definition it installs (runtime-definition.ts), the wait for acceptance
 * (await-acceptance.ts), what a `failed` record says (failed-record.ts), and the go a started
 * runner waits for before it begins (go-signal.ts).
 */
import {
  ACCEPTANCE_TIMEOUT_MS,
  describeListen,
  FleetError,
  runtimeLayout,
  type BootstrapAdapter,
  type IdentityResponse,
  type NodeContext,
  type Registry,
  type RuntimeExpectation,
  type SupervisorKind,
} from '@fleet/core/node';
import { createNodeContext } from '../context.js';
import { describeFailures, type Acceptance } from '../generations/acceptance.js';
import { verifyGeneration } from '../generations/verify.js';
import { lastTransaction, RuntimeJournal, type Transaction } from '../generations/journal.js';
import { withRuntimeLock } from '../generations/lock.js';
import { currentPointer } from '../generations/pointer.js';
import { awaitAcceptance } from './await-acceptance.js';
import { FAILURE_CHARS, failedData } from './failed-record.js';
import { RESUMABLE, rollbackTarget } from './journal-history.js';
import { LocalIdentityProbe } from './live.js';
import { readListenRecord } from './listen-record.js';
import { RuntimeDefinition } from './runtime-definition.js';

export interface RunnerOptions {
  readonly home: string;
  readonly registry: Registry;
  readonly mode: 'activate' | 'rollback' | 'resume';
  /**
   * activate: the transaction to carry on (it must be open at `staged`); resume: the interrupted
   * transaction to close (open past `activated`, its runner gone).
   */
  readonly transaction?: string;
  readonly acceptanceTimeoutMs?: number;
  /** One line of progress (the runner's log file). */
  readonly log: (line: string) => void;
  /** Overrides for tests: the context the adapter drives. */
  readonly ctx?: NodeContext;
}

export interface RunnerOutcome {
  readonly transaction: string;
  readonly outcome: 'accepted' | 'rolled-back' | 'manual-recovery-required' | 'failed';
}

class Runner {
  private readonly journal: RuntimeJournal;
  private readonly ctx: NodeContext;
  private readonly definition: RuntimeDefinition;
  readonly probe: LocalIdentityProbe;

  constructor(
    private readonly options: RunnerOptions,
    nodeId: string,
  ) {
    this.journal = new RuntimeJournal(options.home);
    this.ctx = options.ctx ?? createNodeContext({ home: options.home, nodeId });
    this.probe = new LocalIdentityProbe(options.home);
    this.definition = new RuntimeDefinition(options.home, this.ctx, (line) => this.log(line));
  }

  private get layout() {
    return runtimeLayout(this.options.home, this.ctx.platform);
  }

  private log(line: string): void {
    this.options.log(line);
  }

  private async adapter(supervisor: string): Promise<BootstrapAdapter> {
    return this.options.registry.bootstrapAdapter(supervisor as SupervisorKind);
  }

  /** Polls the live identity of `command` until it is accepted or the timeout passes. */
  private async accept(
    command: readonly string[],
    expectation: RuntimeExpectation,
  ): Promise<{ acceptance: Acceptance; identity: IdentityResponse | null }> {
    const client = await this.probe.client(command, this.ctx.nodeId);
    const timeoutMs = this.options.acceptanceTimeoutMs ?? ACCEPTANCE_TIMEOUT_MS.default;
    return awaitAcceptance(client, expectation, timeoutMs, (line) => this.log(line));
  }

  /** Activation of an open transaction at `staged`. */
  async activate(txn: Transaction): Promise<RunnerOutcome> {
    const { target, supervisor } = txn.begin.data;
    const adapter = await this.adapter(supervisor);
    const buildId = target.build.sha256;
    let command: readonly string[];
    try {
      const pointer = currentPointer(this.layout, adapter.pointer);
      const { previous } = await pointer.flip(buildId);
      await this.journal.append(txn.id, 'activated', { buildId, previous });
      this.log(`current -> ${buildId.slice(0, 12)}`);
    } catch (error) {
      await this.journal.append(txn.id, 'failed', failedData('activate', error));
      return this.rollback(txn.id, txn.begin.data.prior, supervisor);
    }
    try {
      const listen = await readListenRecord(this.options.home, txn.id);
      if (listen !== null)
        this.log(`listen: ${describeListen(listen)} (fleet.yaml's controller URL)`);
      command = await this.definition.install(adapter, buildId, target.nodeId, listen);
      const observed = await adapter.observe(this.ctx).catch(() => null);
      await this.journal.append(txn.id, 'supervisor-restarted', {
        supervisor,
        pid: observed?.pid ?? null,
      });
    } catch (error) {
      this.log(`restart failed: ${(error as Error).message}`);
      const why = await this.definition.controllerLog(adapter);
      await this.journal.append(txn.id, 'failed', {
        ...failedData('restart', error),
        message: `${(error as Error).message}; ${why}`.slice(0, FAILURE_CHARS),
      });
      return this.rollback(txn.id, txn.begin.data.prior, supervisor);
    }
    const { acceptance, identity } = await this.accept(command, target);
    if (acceptance.accepted) {
      await this.journal.append(txn.id, 'accepted', { buildId });
      await this.journal.append(txn.id, 'end', { outcome: 'accepted' });
      return { transaction: txn.id, outcome: 'accepted' };
    }
    const criteria = describeFailures(acceptance.failures);
    // A controller that never answered did not come up: its log says why (issue 35 item 3).
    const why = identity === null ? `; ${await this.definition.controllerLog(adapter)}` : '';
    await this.journal.append(txn.id, 'failed', {
      during: 'acceptance',
      code: 'ACCEPTANCE_FAILED',
      message: `the new runtime was not accepted: ${criteria.join('; ')}${why}`.slice(
        0,
        FAILURE_CHARS,
      ),
      criteria,
    });
    return this.rollback(txn.id, txn.begin.data.prior, supervisor);
  }

  /**
   * `fleet upgrade HOST --resume` (issue 36): an open transaction past `activated` whose runner
   * died. Nothing is flipped or restarted: the runtime the supervisor runs now is accepted again
   * by the transaction's own expectation — `accepted` (unless journaled already) and `end` — or
   * it is not, and the transaction fails and rolls back as an activation would have.
   */
  async resume(txn: Transaction): Promise<RunnerOutcome> {
    const { target, supervisor } = txn.begin.data;
    const adapter = await this.adapter(supervisor);
    const observed = await adapter.observe(this.ctx).catch(() => null);
    const command = observed?.command ?? [];
    this.log(`resuming ${txn.id} interrupted at "${txn.last.step}": acceptance again`);
    if (command.length === 0) {
      await this.journal.append(txn.id, 'failed', {
        during: 'acceptance',
        code: 'ACCEPTANCE_FAILED',
        message: `resumed: the supervisor reports no running command (${observed?.state ?? 'not observed'})`,
        criteria: [],
      });
      return this.rollback(txn.id, txn.begin.data.prior, supervisor);
    }
    const { acceptance } = await this.accept(command, target);
    const criteria = describeFailures(acceptance.failures);
    if (acceptance.accepted) {
      if (txn.last.step === 'activated') {
        // The restart was done, not journaled: the supervisor runs the target now.
        await this.journal.append(txn.id, 'supervisor-restarted', {
          supervisor,
          pid: observed?.pid ?? null,
        });
      }
      if (txn.last.step !== 'accepted') {
        await this.journal.append(txn.id, 'accepted', { buildId: target.build.sha256 });
      }
      await this.journal.append(txn.id, 'end', { outcome: 'accepted' });
      return { transaction: txn.id, outcome: 'accepted' };
    }
    if (txn.last.step === 'accepted') {
      // Journaled accepted, answering otherwise now: only `end` may follow, and it would say
      // accepted. Left open for `fleet bootstrap rollback`, which ends it and rolls back.
      throw new FleetError(
        'ACCEPTANCE_FAILED',
        `transaction ${txn.id} was journaled accepted, but the live runtime is not accepted now (${criteria.join('; ')}): left open; roll it back with \`fleet bootstrap rollback\``,
      );
    }
    await this.journal.append(txn.id, 'failed', {
      during: 'acceptance',
      code: 'ACCEPTANCE_FAILED',
      message: `resumed, the runtime was not accepted: ${criteria.join('; ')}`.slice(
        0,
        FAILURE_CHARS,
      ),
      criteria,
    });
    return this.rollback(txn.id, txn.begin.data.prior, supervisor);
  }

  /** After `failed`: back to `prior`, verified by acceptance, or manual recovery. */
  async rollback(
    txn: string,
    prior: RuntimeExpectation | null,
    supervisor: string,
  ): Promise<RunnerOutcome> {
    const adapter = await this.adapter(supervisor);
    const manual = async (reason: string): Promise<RunnerOutcome> => {
      this.log(`manual recovery required: ${reason}`);
      // Not left restarting a runtime that failed: stopped, the failed generation kept.
      await adapter.stop(this.ctx).catch((error: Error) => this.log(`stop: ${error.message}`));
      await this.journal.append(txn, 'manual-recovery-required', { reason: reason.slice(0, 500) });
      await this.journal.append(txn, 'end', { outcome: 'manual-recovery-required' });
      return { transaction: txn, outcome: 'manual-recovery-required' };
    };
    if (prior === null) {
      return manual('NO_PRIOR_GENERATION: there is no prior generation to roll back to');
    }
    const priorId = prior.build.sha256;
    const check = await verifyGeneration(this.layout, priorId);
    if (!check.ok) {
      return manual(
        `NO_PRIOR_GENERATION: the prior generation ${priorId.slice(0, 12)} does not verify (${check.problems.join('; ')})`,
      );
    }
    let command: readonly string[];
    try {
      await currentPointer(this.layout, adapter.pointer).flip(priorId);
      this.log(`current -> ${priorId.slice(0, 12)} (rollback)`);
      command = await this.definition.install(adapter, priorId, prior.nodeId);
    } catch (error) {
      return manual(`ROLLBACK_FAILED: ${(error as Error).message}`);
    }
    const { acceptance } = await this.accept(command, prior);
    if (!acceptance.accepted) {
      return manual(
        `ROLLBACK_FAILED: the prior runtime was not accepted: ${describeFailures(acceptance.failures).join('; ')}`,
      );
    }
    await this.journal.append(txn, 'rolled-back', { buildId: priorId });
    await this.journal.append(txn, 'end', { outcome: 'rolled-back' });
    return { transaction: txn, outcome: 'rolled-back' };
  }

  /**
   * `fleet bootstrap rollback`: an open transaction is finished by rolling it back (or closed
   * when nothing was activated); otherwise a new `rollback` transaction returns to the prior of
   * the last accepted one.
   */
  async rollbackCommand(): Promise<RunnerOutcome> {
    const parsed = await this.journal.readTrusted();
    const txn = lastTransaction(parsed);
    if (txn && !txn.ended) {
      const { prior, supervisor } = txn.begin.data;
      const interrupted = new FleetError(
        'ACTION_FAILED',
        `interrupted at "${txn.last.step}"; rolled back on the operator's request`,
      );
      switch (txn.last.step) {
        case 'begin':
        case 'staged':
          await this.journal.append(txn.id, 'failed', failedData('other', interrupted));
          await this.journal.append(txn.id, 'end', { outcome: 'failed' });
          this.log(`transaction ${txn.id} closed: nothing had been activated`);
          return { transaction: txn.id, outcome: 'failed' };
        case 'activated':
        case 'supervisor-restarted':
          await this.journal.append(txn.id, 'failed', failedData('other', interrupted));
          return this.rollback(txn.id, prior, supervisor);
        case 'failed':
          return this.rollback(txn.id, prior, supervisor);
        case 'accepted':
        case 'rolled-back':
        case 'manual-recovery-required': {
          const outcome = txn.last.step;
          await this.journal.append(txn.id, 'end', { outcome });
          if (outcome !== 'accepted') return { transaction: txn.id, outcome };
          break; // accepted: a rollback transaction follows
        }
        default:
          break;
      }
    }
    const back = rollbackTarget(await this.journal.readTrusted());
    if (back === null) {
      throw new FleetError(
        'NO_PRIOR_GENERATION',
        'no accepted transaction with a prior generation is journaled: there is nothing to roll back to',
      );
    }
    const supervisor = txn?.begin.data.supervisor ?? 'none';
    const id = await this.journal.begin({
      kind: 'rollback',
      supervisor,
      target: back.to,
      prior: back.from,
      planId: null,
    });
    const rollbackTxn = lastTransaction(await this.journal.readTrusted()) as Transaction;
    return this.activateRollback(rollbackTxn, id);
  }

  /** A `rollback` transaction: its target is the older generation, its prior the current one. */
  private async activateRollback(txn: Transaction, id: string): Promise<RunnerOutcome> {
    const check = await verifyGeneration(this.layout, txn.begin.data.target.build.sha256);
    if (!check.ok) {
      await this.journal.append(
        id,
        'failed',
        failedData(
          'activate',
          new FleetError(
            'NO_PRIOR_GENERATION',
            `the generation to roll back to does not verify: ${check.problems.join('; ')}`,
          ),
        ),
      );
      await this.journal.append(id, 'end', { outcome: 'failed' });
      throw new FleetError(
        'NO_PRIOR_GENERATION',
        `the generation to roll back to does not verify (${check.problems.join('; ')}); nothing was changed`,
      );
    }
    return this.activate(txn);
  }
}

/** Runs one runner invocation under the runtime lock. */
export async function runRuntimeTransaction(options: RunnerOptions): Promise<RunnerOutcome> {
  return withRuntimeLock(options.home, async () => {
    const journal = new RuntimeJournal(options.home);
    const txn = lastTransaction(await journal.readTrusted());
    const nodeId = txn?.begin.data.target.nodeId ?? 'unknown';
    const runner = new Runner(options, nodeId);
    try {
      if (options.mode === 'rollback') return await runner.rollbackCommand();
      if (options.mode === 'resume') {
        if (!txn || txn.id !== options.transaction || txn.ended || !RESUMABLE.has(txn.last.step)) {
          throw new FleetError(
            'PRECONDITION_FAILED',
            `transaction ${options.transaction ?? '?'} is not open past "activated" (last: ${txn ? `${txn.id} at ${txn.last.step}${txn.ended ? ', ended' : ''}` : 'none'}): nothing to resume`,
          );
        }
        return await runner.resume(txn);
      }
      if (!txn || txn.id !== options.transaction || txn.ended || txn.last.step !== 'staged') {
        throw new FleetError(
          'PRECONDITION_FAILED',
          `transaction ${options.transaction ?? '?'} is not open at "staged" (last: ${txn ? `${txn.id} at ${txn.last.step}` : 'none'})`,
        );
      }
      return await runner.activate(txn);
    } finally {
      await runner.probe.release();
    }
  });
}
