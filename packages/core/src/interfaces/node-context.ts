/**
 * The seams between a domain's node half and the machine it runs on. Domain code never touches
 * `process.env`, the wall clock or `child_process` directly: it receives a {@link NodeContext},
 * which the controller builds from the real machine and `@fleet/testkit` builds from fakes.
 */
import type { ControllerSupervisor } from './supervisor.js';

/** The platforms fleet manages. */
export type Platform = 'linux' | 'darwin' | 'win32';

/** Time, injected so tests can fix it and skew it. */
export interface Clock {
  /** Wall-clock time (for timestamps, expiry). */
  now(): Date;
  /** Monotonic milliseconds (for durations and timeouts). */
  monotonicMs(): number;
}

/** One external command to run: never through a shell. */
export interface ProcessRequest {
  /** The executable (looked up on the child's `PATH`). */
  readonly command: string;
  /** Its arguments, passed as they are. */
  readonly args: readonly string[];
  /** Working directory (default: the node's home). */
  readonly cwd?: string;
  /**
   * The child's whole environment: nothing is inherited implicitly. On a node, fleet's own
   * variables (`FLEET_*`) and any value of the env-file chain are dropped from it.
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Variables added to the runner's default minimal environment when `env` is not given (e.g.
   * `XDG_RUNTIME_DIR` for `systemctl --user`). On a node, the same variables are dropped as from
   * `env`: never a token, never a secret.
   */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Written to the child's stdin. */
  readonly input?: string;
  /** The child is killed after this long (`timedOut` in the result). */
  readonly timeoutMs?: number;
}

/** What a command did: it never throws for a non-zero exit. */
export interface ProcessResult {
  /** The exit code (`-1` when it did not exit normally, e.g. not found). */
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the process was killed for exceeding `timeoutMs`. */
  readonly timedOut: boolean;
}

/** Runs external commands (a supervisor's CLI, a reload command). Never through a shell. */
export interface ProcessRunner {
  /** Runs one command to its end. */
  run(request: ProcessRequest): Promise<ProcessResult>;
}

/** One coupled action of the node policy, as it ran: what the audit record names (contract §5.1). */
export interface ActionRun {
  /** The node policy's id of the action. */
  readonly id: string;
  /** The argv that ran: the node policy's, `~` and a validate action's `{file}` expanded. */
  readonly argv: readonly string[];
  /** Its exit code; `null` when it did not exit normally (killed, not found). */
  readonly exitCode: number | null;
  /** True when it was killed for exceeding its policy timeout. */
  readonly timedOut: boolean;
  /**
   * What it printed (stdout, then stderr), redacted and cut to the policy's bound — present only
   * when its policy entry says `output: return`. Otherwise nothing it printed leaves the node.
   */
  readonly output?: string;
}

/**
 * The node policy's coupled actions for one domain, by id: the only way a request makes a node run
 * something (contract §5.1). A request names an id; the argv, timeout and output rule come from
 * the node's own policy. The child gets a minimal environment (PATH, HOME, LANG/LC_*, and
 * `XDG_RUNTIME_DIR` / `DBUS_SESSION_BUS_ADDRESS` when the controller has them), no shell.
 */
export interface ActionRunner {
  /** Whether the node policy defines `id` for this domain. */
  has(id: string): boolean;
  /**
   * Runs action `id` to its end (`POLICY_REFUSED` when the policy defines no such action). With
   * `file` (a validate action, on the staged new content before it replaces the old: absolute),
   * the policy's `{file}` placeholder names it; an argv without one is `POLICY_REFUSED`.
   */
  run(id: string, options?: ActionRunOptions): Promise<ActionRun>;
}

/** How one action run is given the file it checks (docs/node-policy.md, `{file}`). */
export interface ActionRunOptions {
  /** The absolute path of the staged file a validate action checks. */
  readonly file?: string;
}

/** Values of the node's env-file chain, by name. Never leaves the node. */
export type SecretValues = ReadonlyMap<string, string>;

/**
 * Reads a file the domain owns through the controller's checks (its allowlist, no symlinked
 * component, nothing outside the home, the size bound): the same read as `SafeFileWriter.read`.
 * `null` when the file does not exist.
 */
export interface SafeFileReader {
  read(path: string): Promise<{ readonly content: Uint8Array; readonly sha256: string } | null>;
  /**
   * Whether fleet's writer put exactly the content `sha256` at `path` (the node's record of its
   * own writes, contract §8.2): what tells a derived file fleet wrote from a hand fix in it.
   * Absent on a host that keeps no record.
   */
  wrote?(path: string, sha256: string): Promise<boolean>;
}

/**
 * Everything a domain's node half may use. `home` is the node's `~`: every path a domain owns is
 * under it (contract §5).
 */
export interface NodeContext {
  /** The node's `~`, absolute. */
  readonly home: string;
  readonly platform: Platform;
  /** The node id the controller runs with (`--node-id`). */
  readonly nodeId: string;
  readonly clock: Clock;
  /** The only way a domain runs external commands. */
  readonly processes: ProcessRunner;
  /**
   * The node policy's coupled actions for the domain being installed (the controller and
   * `@fleet/testkit`'s fake host provide it to an install). A domain that runs an action a request
   * names runs it through this, never through `processes`.
   */
  readonly actions?: ActionRunner;
  /** Loads the env-file chain (contract §4) afresh: values may change between operations. */
  secrets(): Promise<SecretValues>;
  /**
   * Safe reads of the domain's own files, when the host provides them (the controller does for
   * probers; `@fleet/testkit`'s fake host does). Probers read live files through this.
   */
  readonly files?: SafeFileReader;
  /**
   * The supervisor that runs this node's controller, as the node recorded it when it was
   * installed (`~/.local/state/fleet/supervisor.json`, contract §12) — never one a request names.
   * Provided by the controller; absent, or resolving to `null`, when the node records none fleet
   * can drive.
   */
  readonly controllerSupervisor?: () => Promise<ControllerSupervisor | null>;
}
