/**
 * The seams between a domain's node half and the machine it runs on. Domain code never touches
 * `process.env`, the wall clock or `child_process` directly: it receives a {@link NodeContext},
 * which the controller builds from the real machine and `@fleet/testkit` builds from fakes.
 */

/** The platforms fleet manages. */
export type Platform = 'linux' | 'darwin' | 'win32';

/** Time, injected so tests can fix it and skew it. */
export interface Clock {
  /** Wall-clock time (for timestamps, expiry). */
  now(): Date;
  /** Monotonic milliseconds (for durations and timeouts). */
  monotonicMs(): number;
}

export interface ProcessRequest {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** The child's whole environment: nothing is inherited implicitly (no tokens, no secrets). */
  readonly env?: Readonly<Record<string, string>>;
  readonly input?: string;
  readonly timeoutMs?: number;
}

export interface ProcessResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the process was killed for exceeding `timeoutMs`. */
  readonly timedOut: boolean;
}

/** Runs external commands (a supervisor's CLI, a reload command). Never through a shell. */
export interface ProcessRunner {
  run(request: ProcessRequest): Promise<ProcessResult>;
}

/** Values of the node's env-file chain, by name. Never leaves the node. */
export type SecretValues = ReadonlyMap<string, string>;

/**
 * Everything a domain's node half may use. `home` is the node's `~`: every path a domain owns is
 * under it (SPEC §5).
 */
export interface NodeContext {
  readonly home: string;
  readonly platform: Platform;
  readonly nodeId: string;
  readonly clock: Clock;
  readonly processes: ProcessRunner;
  /** Loads the env-file chain (SPEC §4) afresh: values may change between operations. */
  secrets(): Promise<SecretValues>;
}
