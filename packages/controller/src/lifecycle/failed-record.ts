/**
 * What the runtime runner's `failed` journal record says (contract §12; runner.ts): where the
 * transaction failed, the error's code, its message bounded, and the acceptance criteria not met.
 */
import { isFleetError } from '@fleet/core/node';
import type { StepData } from '../generations/journal-record.js';

/**
 * How long a `failed` record's message may be: room for the criteria and the controller's log
 * excerpt (controller-log.ts bounds it to 1,500 characters). The journal's schema bounds none.
 */
export const FAILURE_CHARS = 2_500;

/** A `failed` record for `error`, its message cut to 500 characters. */
export function failedData(
  during: StepData<'failed'>['during'],
  error: unknown,
  criteria: readonly string[] = [],
): StepData<'failed'> {
  return {
    during,
    code: isFleetError(error) ? error.code : 'ACTION_FAILED',
    message: (error instanceof Error ? error.message : String(error)).slice(0, 500),
    criteria: [...criteria],
  };
}
