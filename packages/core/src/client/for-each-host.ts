/**
 * Fleet-wide verbs talk to every host concurrently, with a bound, and go on past a host that
 * fails: one unreachable node must not hide the report of the others (contract §8.1). So the result
 * is one settled outcome per host, in the order the hosts were given, and the whole never rejects.
 */
import pLimit from 'p-limit';
import { FleetError, isFleetError, type FleetErrorLike } from '../errors.js';

/** Default bound on hosts in flight: enough to hide latency, few enough to spare sockets. */
export const DEFAULT_HOST_CONCURRENCY = 32;

export type HostOutcome<T> =
  | { readonly host: string; readonly ok: true; readonly value: T }
  | { readonly host: string; readonly ok: false; readonly error: FleetErrorLike };

export interface ForEachHostOptions<T> {
  /** Hosts in flight at once (default {@link DEFAULT_HOST_CONCURRENCY}). */
  readonly concurrency?: number;
  /** Called as each host settles (progress on stderr for long runs). */
  readonly onSettled?: (outcome: HostOutcome<T>) => void;
}

/** Any thrown value as a fleet error: a bug in one host's handling is that host's `INTERNAL`. */
export function asFleetError(error: unknown): FleetErrorLike {
  if (isFleetError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FleetError('INTERNAL', message, { cause: error });
}

export async function forEachHost<T>(
  hosts: readonly string[],
  fn: (host: string) => Promise<T>,
  options: ForEachHostOptions<T> = {},
): Promise<HostOutcome<T>[]> {
  const concurrency = options.concurrency ?? DEFAULT_HOST_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new FleetError('USAGE', `concurrency must be a positive integer, not ${concurrency}`);
  }
  const limit = pLimit(concurrency);
  return Promise.all(
    hosts.map((host) =>
      limit(async (): Promise<HostOutcome<T>> => {
        let outcome: HostOutcome<T>;
        try {
          outcome = { host, ok: true, value: await fn(host) };
        } catch (error) {
          outcome = { host, ok: false, error: asFleetError(error) };
        }
        try {
          options.onSettled?.(outcome);
        } catch {
          // A progress printer that throws must not turn one host's outcome into a rejection.
        }
        return outcome;
      }),
    ),
  );
}
