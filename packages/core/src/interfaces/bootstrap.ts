import type { NodeContext, Platform } from './node-context.js';

/** The supervisors fleet knows (`supervisor:` in fleet.yaml). */
export type SupervisorKind = 'systemd-user' | 'windows-task' | 'launchd' | 'lab' | 'none';

/** An immutable runtime generation (contract §12). */
export interface Generation {
  /** The build id: the artifact's sha256, which names `generations/<build-id>/`. */
  readonly buildId: string;
  readonly version: string;
  readonly commit: string;
  readonly directory: string;
}

/** The supervisor definition an adapter generates for a generation (unit file, task XML). */
export interface SupervisorDefinition {
  /** `~/`-relative location of the definition file. */
  readonly path: string;
  readonly content: string;
  /** How `content` is written: UTF-8, or UTF-16LE with a byte-order mark (Task Scheduler XML). */
  readonly encoding: 'utf8' | 'utf16le';
}

export interface SupervisorDefinitionInput {
  /** Absolute path of the node's home (the controller's `--home`, the service's working dir). */
  readonly home: string;
  readonly nodeId: string;
  /**
   * The command that starts the runtime of a generation, as argv (core's `runtimeCommand`):
   * `<node> <generation>/package/bin/run.js controller serve --home … --node-id …`.
   */
  readonly command: readonly string[];
  /** Extra environment for the runtime (no secrets: definitions are readable files). */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * The supervisor's name for the controller (a unit such as `fleet-controller.service`, a task
   * name), when it is not the adapter's default: the one the node recorded (`supervisor.json`),
   * or a lab host's own. The definition's path follows it.
   */
  readonly name?: string;
}

/** What a definition says, read back (pure): for observation and for changing one flag. */
export interface DefinitionFacts {
  readonly command: readonly string[];
  /** The generation the command runs (its build id), when it runs one. */
  readonly generation: string | null;
  /** The `--node-id` the command carries. */
  readonly nodeIdFlag: string | null;
  /** The runtime's extra environment, as the definition sets it. */
  readonly environment: Readonly<Record<string, string>>;
}

/** What the supervisor reports, observed rather than remembered. */
export interface ObservedSupervisor {
  /** The definition is installed and the supervisor knows it. */
  readonly present: boolean;
  readonly enabled: boolean;
  readonly running: boolean;
  /** The supervisor's own word for the state (`active`, `failed`, `Running`, `Ready`…). */
  readonly state: string;
  readonly pid?: number;
  /** The generation the supervised command points at (a build id), when it can be read. */
  readonly generation?: string;
  /** The `--node-id` the supervised command carries. */
  readonly nodeIdFlag?: string;
  /** The supervised command (argv), from the same source as `generation`. */
  readonly command?: readonly string[];
  /**
   * Where `generation`/`nodeIdFlag` were read: the running process itself (`/proc/<pid>`), what
   * the supervisor has loaded, or only the definition file on disk.
   */
  readonly source?: 'process' | 'supervisor' | 'file';
  /** The definition on disk differs from what the supervisor loaded (systemd `NeedDaemonReload`). */
  readonly needsReload?: boolean;
  readonly detail?: string;
}

/**
 * A node-local fleet process that must outlive a restart of the supervised controller (the
 * runtime runner, the `--node-id` switch): what {@link BootstrapAdapter.launchDetached} starts.
 */
export interface DetachedJob {
  /**
   * A name for this one start, unique on the node (`fleet-runtime-<txn>`): the transient unit's
   * or the task's name. Letters, digits, `.`, `_`, `-`.
   */
  readonly name: string;
  /** The command, absolute executable first. */
  readonly argv: readonly string[];
  /** Its working directory (the node's home). */
  readonly cwd: string;
  /**
   * The job's whole environment. It is handed to the supervisor by name where it can be (never
   * as values on a command line anyone can read): no tokens, no secrets.
   */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute path of the job's log: its stdout and stderr are appended (created 0600). */
  readonly log: string;
  /**
   * The job's kind (`runtime-runner`, `node-id-switch`), of which at most one runs at a time on
   * a node: a supervisor that keeps one definition per kind (a task `fleet-<slot>`) reuses it.
   */
  readonly slot: string;
}

/** How {@link BootstrapAdapter.launchDetached} started a job. */
export type DetachedLaunch =
  /** The supervisor runs it apart from the controller (a transient unit, a task of its own). */
  | {
      readonly started: 'supervisor';
      /** Its pid, when the supervisor reports one (Task Scheduler reports none). */
      readonly pid: number | null;
      readonly detail: string;
    }
  /**
   * Not started: the caller is outside what a restart of the controller stops (an SSH session, a
   * node operator's shell), so a detached child of its own is safe — and the caller starts one.
   */
  | { readonly started: 'not-needed'; readonly detail: string };

/** A reason the supervisor cannot be relied on (catalogue 54: no lingering, no user bus). */
export interface SupervisorProblem {
  readonly code: string;
  readonly message: string;
}

/**
 * A supervisor adapter (contract §6, §12): generates the supervisor definition for a generation
 * (pure), installs it and makes the supervisor read it, starts, stops and restarts the runtime,
 * and observes what actually runs.
 *
 * The generation machinery — staging, the atomic `current` pointer, the journal, acceptance and
 * rollback — is the controller's (`packages/controller/src/generations/`), the same for every
 * supervisor: activation is "flip the pointer, install the definition for the new generation,
 * restart", and rollback is the same with the prior generation. The adapter says which pointer
 * form its platform uses.
 */
export interface BootstrapAdapter {
  readonly supervisor: SupervisorKind;
  readonly platforms: readonly Platform[];
  /** How `current` is switched on this platform: a symlink rename, or a replaced pointer file. */
  readonly pointer: 'symlink' | 'file';
  /** Pure: the definition for a generation. */
  definition(input: SupervisorDefinitionInput): SupervisorDefinition;
  /** Pure: what a definition's content says (argv, generation, `--node-id`). */
  readDefinition(content: string): DefinitionFacts;
  /** Checks the supervisor is usable before anything is changed; `[]` when it is. */
  preflight(ctx: NodeContext): Promise<readonly SupervisorProblem[]>;
  /**
   * Writes the definition atomically and makes the supervisor read it (daemon-reload and enable;
   * `/Create /XML /F`), then checks the supervisor really holds it. Does not restart.
   */
  installDefinition(ctx: NodeContext, definition: SupervisorDefinition): Promise<void>;
  start(ctx: NodeContext): Promise<void>;
  stop(ctx: NodeContext): Promise<void>;
  restart(ctx: NodeContext): Promise<void>;
  observe(ctx: NodeContext): Promise<ObservedSupervisor>;
  /**
   * Records a new `--node-id` in the installed definition (contract §10.2, transport-identity's
   * coupled action) and makes the supervisor read it; returns the previous value. Does not
   * restart: the caller restarts and verifies.
   */
  recordNodeId(ctx: NodeContext, nodeId: string): Promise<{ readonly previous: string | null }>;
  /**
   * Starts `job` where a restart of the supervised controller cannot end it (contract §12: the
   * runner leaves the cgroup): a transient unit of its own (`systemd-run --user`), a task of its
   * own (Task Scheduler ends a task's whole job object). Absent when a detached child of the
   * controller already outlives the supervisor's restart (the lab supervisor ends only the
   * controller's own process). Rejects — having started nothing — when the job can be started
   * neither out of the restart's reach nor safely as a child.
   */
  launchDetached?(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch>;
  /**
   * Stops the runtime and removes its definition, so that the supervisor forgets it (as
   * `fleet lab down` does to a lab whose controllers are real units). The node's supervisor
   * record goes too.
   */
  uninstall?(ctx: NodeContext): Promise<void>;
}
