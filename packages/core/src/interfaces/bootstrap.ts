import type { NodeContext, Platform } from './node-context.js';

/** The supervisors fleet knows (`supervisor:` in fleet.yaml). */
export type SupervisorKind = 'systemd-user' | 'windows-task' | 'launchd' | 'lab' | 'none';

/** An immutable runtime generation (SPEC §12). */
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
}

export interface SupervisorDefinitionInput {
  readonly home: string;
  readonly nodeId: string;
  /** The command that starts the runtime of the current generation, as argv. */
  readonly command: readonly string[];
  readonly port?: number;
}

/** What the supervisor reports, observed rather than remembered. */
export interface ObservedSupervisor {
  readonly present: boolean;
  readonly enabled: boolean;
  readonly running: boolean;
  readonly pid?: number;
  /** The generation the supervised command points at, when it can be read. */
  readonly generation?: string;
  /** The `--node-id` the supervised command carries. */
  readonly nodeIdFlag?: string;
}

/**
 * A supervisor adapter (SPEC §6, §12): generates and installs the supervisor definition, switches
 * the current-generation pointer atomically, restarts, observes and rolls back.
 */
export interface BootstrapAdapter {
  readonly supervisor: SupervisorKind;
  readonly platforms: readonly Platform[];
  /** Pure: the definition for a generation. */
  definition(input: SupervisorDefinitionInput): SupervisorDefinition;
  /** Writes the definition and makes the supervisor read it (daemon-reload, /Create /XML). */
  installDefinition(ctx: NodeContext, definition: SupervisorDefinition): Promise<void>;
  /** Atomically points `current` at `generation`; returns the previous target. */
  activate(ctx: NodeContext, generation: Generation): Promise<string | null>;
  restart(ctx: NodeContext): Promise<void>;
  observe(ctx: NodeContext): Promise<ObservedSupervisor>;
  /** Points `current` back at `previousBuildId` and restarts. */
  rollback(ctx: NodeContext, previousBuildId: string): Promise<void>;
}
