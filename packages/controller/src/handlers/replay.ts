/**
 * Operation ids are single-use, and must be fresh: a ULID carries its creation time, and one
 * further than the allowed skew from the node's clock is `CLOCK_SKEW` (both times named). So the
 * node only has to remember ids for the skew window to refuse every replay, and keeps records
 * longer only to answer status queries.
 */
import { FleetError } from '@fleet/core/node';
import { errorBody, toWireError } from '../http/respond.js';
import { ulidTime } from '../operations.js';
import { redactorOf, type ControllerRuntime } from '../runtime.js';

/** `REPLAY_REJECTED` if the id is in progress or was already used. */
export async function checkUnused(runtime: ControllerRuntime, id: string): Promise<void> {
  if (runtime.operations.inflight.has(id) || (await runtime.operations.journalExists(id))) {
    throw new FleetError('REPLAY_REJECTED', `operation ${id} is already in progress`);
  }
  if ((await runtime.operations.get(id)) !== undefined) {
    throw new FleetError('REPLAY_REJECTED', `operation id ${id} was already used`);
  }
}

/** `CLOCK_SKEW` unless the id's time is within the window around the node's clock. */
export function checkFresh(runtime: ControllerRuntime, id: string): void {
  const issued = ulidTime(id);
  const now = runtime.clock.now().getTime();
  if (Math.abs(now - issued) > runtime.limits.clockSkewMs) {
    throw new FleetError(
      'CLOCK_SKEW',
      `operation id ${id} was made at ${new Date(issued).toISOString()}, but the node's clock says ${new Date(now).toISOString()} (allowed skew ${Math.round(runtime.limits.clockSkewMs / 1000)} s)`,
      { suggestions: ['check both clocks; make a new operation id for a new request'] },
    );
  }
}

export async function checkFreshOperationId(runtime: ControllerRuntime, id: string): Promise<void> {
  await checkUnused(runtime, id);
  checkFresh(runtime, id);
}

/**
 * Every operation id that reached its handler is claimed, whatever its outcome (contract §15):
 * a request refused before its journal was opened — `LOCKED`, `CLOCK_SKEW`, a bad path — gets an
 * operation record of that refusal, so the same bytes sent again later are answered with it (and
 * other bytes under that id are `REPLAY_REJECTED`), never run (catalogue 8: A→B→A). An id that is
 * in progress or already recorded is left as it is.
 */
export async function claimRefused(
  runtime: ControllerRuntime,
  claim: {
    readonly operationId: string;
    readonly operation: 'install' | 'capture';
    readonly requestSha256: string;
    readonly client: string;
    readonly startedAt: string;
  },
  error: unknown,
): Promise<void> {
  const wire = toWireError(error);
  if (wire.code === 'REPLAY_REJECTED') return;
  const { operations } = runtime;
  if (
    (await operations.journalExists(claim.operationId)) ||
    (await operations.get(claim.operationId))
  ) {
    return;
  }
  const redactor = await redactorOf(runtime).catch(() => undefined);
  await operations.finish({
    ...claim,
    state: 'failed',
    finishedAt: runtime.clock.now().toISOString(),
    error: redactor
      ? errorBody(wire, redactor).error
      : { code: wire.code, message: `${wire.code} (details withheld)` },
    httpStatus: wire.status,
  });
}
