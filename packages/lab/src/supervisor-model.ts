/**
 * The pure parts of the lab supervisor (supervisor.ts, contract §13): what a start spawns when the
 * node's home holds no definition, when a started controller accepts requests, and which crashes
 * still count against the crash limit. Kept apart from supervisor.ts so that `@fleet/lab` does not
 * export them.
 */
import { CONTROLLER_NODE_OPTIONS } from '@fleet/core';
import { type LabSupervisorFlags } from './supervisor-protocol.js';

export const CRASH_WINDOW_MS = 60_000;
export const MAX_CRASHES = 5;

/** What one start spawns. */
export interface Launch {
  /** The node binary. */
  readonly executable: string;
  readonly args: readonly string[];
  /** Extra environment (the definition's). */
  readonly environment: Readonly<Record<string, string>>;
  /** Where the command came from, for the log. */
  readonly source: string;
  /** The `--node-id` it runs with. */
  readonly nodeId: string;
}

/** The dev checkout's controller, run when the node's home holds no definition. */
export function devCheckoutLaunch(
  fleetBin: string,
  home: string,
  flags: LabSupervisorFlags,
): Launch {
  return {
    executable: process.execPath,
    args: [
      ...CONTROLLER_NODE_OPTIONS,
      fleetBin,
      'controller',
      'serve',
      '--home',
      home,
      '--node-id',
      flags.nodeId,
      '--port',
      String(flags.port),
      '--json',
    ],
    environment: {},
    source: 'the dev checkout',
    nodeId: flags.nodeId,
  };
}

/**
 * The crash times still inside the crash window at `now` (oldest first), `now` included: more
 * than MAX_CRASHES of them and the controller is not restarted again.
 */
export function recentCrashes(crashes: readonly number[], now: number): number[] {
  return [...crashes, now].filter((at) => at >= now - CRASH_WINDOW_MS);
}

/** The port a controller's first stdout line (`{"url": …}`) says it bound, or null. */
export function readyPort(line: string): number | null {
  try {
    const started = JSON.parse(line) as { url?: unknown };
    const port = Number(new URL(String(started.url)).port);
    return Number.isInteger(port) && port > 0 ? port : null;
  } catch {
    return null;
  }
}
