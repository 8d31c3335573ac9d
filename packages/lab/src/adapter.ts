/**
 * The lab bootstrap adapter's node half (contract §12–§13): a lab node's controller runs under the lab
 * supervisor (`fleet lab up`), which reads an optional definition,
 * `~/.config/fleet/lab-controller.json`, at every (re)start. This adapter writes that definition
 * for a runtime generation and drives the supervisor through its control socket — `restart`,
 * `stop`, `status` — the lab's stand-in for `systemctl --user daemon-reload|restart|show`.
 *
 * The socket is the one the supervisor hands its controller in `FLEET_LAB_SUPERVISOR` (or one
 * passed in the options). A restart replaces the controller that asks for it — it is the
 * supervisor's child — so callers restart from a detached process; the supervisor answers once
 * the new controller accepts requests, or with why it did not start.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  FleetError,
  describeRuntimeCommand,
  readDefinitionFile,
  withNodeId,
  writeDefinitionFile,
  writeSupervisorRecord,
  type BootstrapAdapter,
  type DefinitionFacts,
  type NodeContext,
  type ObservedSupervisor,
  type SupervisorDefinition,
  type SupervisorDefinitionInput,
  type SupervisorProblem,
} from '@fleet/core';
import {
  LAB_SUPERVISOR_ENV,
  labSupervisorClient,
  type LabSupervisorClient,
  type LabSupervisorState,
} from './supervisor-protocol.js';
import {
  LAB_CONTROLLER_DEFINITION_PATH,
  isNodeId,
  labControllerDefinition,
  labDefinitionProblem,
  parseLabControllerDefinition,
  readLabControllerDefinition,
  withJsonFlag,
} from './definition.js';

export interface LabAdapterOptions {
  /** The supervisor's control socket (default: `FLEET_LAB_SUPERVISOR` of `env`). */
  readonly socket?: string;
  /** Where the socket is looked up when `socket` is not given (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long a restart may take: stop, then up to three cold starts (default 200 s). */
  readonly restartTimeoutMs?: number;
  /** How long a `status` may take (default 5 s). */
  readonly statusTimeoutMs?: number;
}

/** A restart of the lab: stop, start again on the same port; up to three cold starts. */
const RESTART_TIMEOUT_MS = 200_000;
const STATUS_TIMEOUT_MS = 5_000;

/** Everything observed, richer than {@link ObservedSupervisor}. */
export interface LabObservation extends ObservedSupervisor {
  /** What the definition on disk says, or `null` when there is none. */
  readonly file: DefinitionFacts | null;
  /** The supervisor's own record. */
  readonly supervisorState: LabSupervisorState;
}

/** The argv of a running process, from /proc (Linux); `null` when it cannot be read. */
async function processArgv(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

const sameArgv = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((arg, index) => arg === b[index]);

/** This node's way to its lab supervisor, and what it holds for the next restart request. */
interface SupervisorLink {
  readonly socket: string | undefined;
  status(): Promise<LabSupervisorState>;
  /** A client for requests that restart or stop the controller. */
  control(): LabSupervisorClient;
  /**
   * A `--node-id` recorded while no definition exists: the supervisor takes it with the next
   * restart request (as it does for transport-identity). A definition installed afterwards wins.
   */
  pendingNodeId: string | undefined;
}

function supervisorLink(options: LabAdapterOptions): SupervisorLink {
  const socket = options.socket ?? (options.env ?? process.env)[LAB_SUPERVISOR_ENV];
  const client = (timeoutMs: number): LabSupervisorClient => {
    if (socket === undefined || socket === '') {
      throw new FleetError(
        'HOST_UNREACHABLE',
        `no lab supervisor: ${LAB_SUPERVISOR_ENV} is not set (this controller does not run under fleet lab up)`,
      );
    }
    return labSupervisorClient(socket, { timeoutMs });
  };
  return {
    socket,
    status: () => client(options.statusTimeoutMs ?? STATUS_TIMEOUT_MS).status(),
    control: () => client(options.restartTimeoutMs ?? RESTART_TIMEOUT_MS),
    pendingNodeId: undefined,
  };
}

/** The supervisor of this node, checked to be the one whose home is `ctx.home`. */
async function supervisorOf(link: SupervisorLink, ctx: NodeContext): Promise<LabSupervisorState> {
  const state = await link.status();
  if (resolve(state.home) !== resolve(ctx.home)) {
    throw new FleetError(
      'ACTION_FAILED',
      `the lab supervisor at ${link.socket} runs the controller of ${state.home}, not of ${ctx.home}`,
    );
  }
  return state;
}

/** Writes a definition and reads it back (the supervisor reads it at the next start). */
async function writeDefinition(ctx: NodeContext, definition: SupervisorDefinition): Promise<void> {
  await writeDefinitionFile(ctx.home, definition);
  const back = await readDefinitionFile(ctx.home, LAB_CONTROLLER_DEFINITION_PATH);
  if (back !== definition.content) {
    throw new FleetError(
      'ACTION_FAILED',
      `${LAB_CONTROLLER_DEFINITION_PATH} does not read back as written`,
    );
  }
  parseLabControllerDefinition(back);
}

/** Why the supervisor that answered cannot run this node's runtime generation (none: it can). */
export function labSupervisorProblems(
  state: LabSupervisorState,
  home: string,
  socket: string | undefined,
): SupervisorProblem[] {
  const problems: SupervisorProblem[] = [];
  if (state.virtual) {
    problems.push({
      code: 'LAB_SUPERVISOR_VIRTUAL',
      message: `${state.host} is a node of a --virtual lab: its controller is no process of its own, so it cannot run a runtime generation`,
    });
  }
  if (resolve(state.home) !== resolve(home)) {
    problems.push({
      code: 'LAB_SUPERVISOR_OTHER_HOME',
      message: `the lab supervisor at ${socket} runs the controller of ${state.home}, not of ${home}`,
    });
  }
  return problems;
}

async function preflightLab(link: SupervisorLink, ctx: NodeContext): Promise<SupervisorProblem[]> {
  let state: LabSupervisorState;
  try {
    state = await link.status();
  } catch (error) {
    return [
      {
        code: 'LAB_SUPERVISOR_UNAVAILABLE',
        message: `the lab supervisor does not answer: ${error instanceof Error ? error.message : String(error)}`,
      },
    ];
  }
  return labSupervisorProblems(state, ctx.home, link.socket);
}

async function installLabDefinition(
  link: SupervisorLink,
  ctx: NodeContext,
  definition: SupervisorDefinition,
): Promise<void> {
  if (definition.path !== LAB_CONTROLLER_DEFINITION_PATH || definition.encoding !== 'utf8') {
    throw new FleetError(
      'USAGE',
      `the lab supervisor reads ${LAB_CONTROLLER_DEFINITION_PATH} (utf8), not ${definition.path} (${definition.encoding})`,
    );
  }
  const parsed = parseLabControllerDefinition(definition.content);
  // Refused before anything is written: the supervisor would refuse it at the next start.
  const state = await supervisorOf(link, ctx);
  const problem = labDefinitionProblem(parsed, { home: state.home, port: state.flags.port });
  if (problem !== null) {
    throw new FleetError(
      'ACTION_FAILED',
      `the lab supervisor of ${state.host} would refuse this definition: ${problem}`,
    );
  }
  await writeDefinition(ctx, definition);
  link.pendingNodeId = undefined;
  // The node records what runs its controller (contract §12).
  await writeSupervisorRecord(ctx.home, {
    supervisor: 'lab',
    name: state.host,
    definition: LAB_CONTROLLER_DEFINITION_PATH,
  });
}

/**
 * What the supervisor's record (`state`), the definition on disk (`file`) and the running
 * controller's argv (`argv`, null when not running or unreadable) say together: the process wins
 * over the file, the file over the supervisor's flags.
 */
export function labObservation(
  state: LabSupervisorState,
  file: DefinitionFacts | null,
  argv: readonly string[] | null,
): LabObservation {
  const running = state.state === 'running' && state.pid !== null;
  let facts: { generation: string | null; nodeIdFlag: string | null; command: readonly string[] };
  let source: 'process' | 'supervisor' | 'file';
  if (argv) {
    const described = describeRuntimeCommand([...argv]);
    // A lab controller first started with `--port 0` is restarted on the port it got: that
    // fixed port is what the supervisor runs, so it is what a new definition must carry.
    const command = argv.map((arg, index) =>
      argv[index - 1] === '--port' && arg === '0' ? String(state.flags.port) : arg,
    );
    facts = { generation: described.buildId, nodeIdFlag: described.nodeId, command };
    source = 'process';
  } else if (file) {
    facts = file;
    source = 'file';
  } else {
    facts = { generation: null, nodeIdFlag: state.flags.nodeId, command: [] };
    source = 'supervisor';
  }
  const detail = [
    `lab supervisor ${state.supervisorPid} of ${state.host}, ${state.restarts} restart(s)`,
    file ? `runs ${LAB_CONTROLLER_DEFINITION_PATH}` : 'runs the dev checkout (no definition)',
    ...(state.error ? [state.error] : []),
  ].join('; ');
  return {
    present: file !== null,
    enabled: file !== null,
    running,
    state: state.state,
    ...(running && state.pid !== null ? { pid: state.pid } : {}),
    ...(facts.generation ? { generation: facts.generation } : {}),
    ...(facts.nodeIdFlag ? { nodeIdFlag: facts.nodeIdFlag } : {}),
    ...(facts.command.length > 0 ? { command: facts.command } : {}),
    source,
    // The definition on disk is not what runs: it takes effect at the next restart.
    needsReload: file !== null && argv !== null && !sameArgv(withJsonFlag(file.command), argv),
    detail,
    file,
    supervisorState: state,
  };
}

async function observeLab(link: SupervisorLink, ctx: NodeContext): Promise<LabObservation> {
  const state = await supervisorOf(link, ctx);
  const content = await readDefinitionFile(ctx.home, LAB_CONTROLLER_DEFINITION_PATH);
  const file = content === null ? null : readLabControllerDefinition(content);
  const running = state.state === 'running' && state.pid !== null;
  const argv = running && state.pid !== null ? await processArgv(state.pid) : null;
  return labObservation(state, file, argv);
}

async function recordLabNodeId(
  link: SupervisorLink,
  ctx: NodeContext,
  nodeId: string,
): Promise<{ readonly previous: string | null }> {
  if (!isNodeId(nodeId))
    throw new FleetError('USAGE', `${JSON.stringify(nodeId)} is not a node id`);
  const content = await readDefinitionFile(ctx.home, LAB_CONTROLLER_DEFINITION_PATH);
  if (content === null) {
    // No definition: the supervisor records the id itself, with the next restart request.
    const state = await supervisorOf(link, ctx);
    link.pendingNodeId = nodeId;
    return { previous: state.flags.nodeId };
  }
  const definition = parseLabControllerDefinition(content);
  const previous = describeRuntimeCommand(definition.command).nodeId;
  const next = labControllerDefinition({
    home: ctx.home,
    nodeId,
    command: withNodeId(definition.command, nodeId),
    environment: definition.environment,
  });
  await writeDefinition(ctx, next);
  // Sent with the restart as well: the supervisor's record then says the same.
  link.pendingNodeId = nodeId;
  return { previous };
}

export function createLabAdapter(options: LabAdapterOptions = {}): BootstrapAdapter & {
  observeLab(ctx: NodeContext): Promise<LabObservation>;
} {
  const link = supervisorLink(options);
  const adapter = {
    supervisor: 'lab' as const,
    platforms: ['linux', 'darwin'] as const,
    pointer: 'symlink' as const,
    definition: (input: SupervisorDefinitionInput) => labControllerDefinition(input),
    readDefinition: (content: string) => readLabControllerDefinition(content),
    preflight: (ctx: NodeContext): Promise<readonly SupervisorProblem[]> => preflightLab(link, ctx),
    installDefinition: (ctx: NodeContext, definition: SupervisorDefinition): Promise<void> =>
      installLabDefinition(link, ctx, definition),
    async start(ctx: NodeContext): Promise<void> {
      await adapter.restart(ctx);
    },
    async stop(_ctx: NodeContext): Promise<void> {
      await link.control().stop();
    },
    async restart(_ctx: NodeContext): Promise<void> {
      const nodeId = link.pendingNodeId;
      await link.control().restart(nodeId === undefined ? {} : { nodeId });
      link.pendingNodeId = undefined;
    },
    observeLab: (ctx: NodeContext): Promise<LabObservation> => observeLab(link, ctx),
    async observe(ctx: NodeContext): Promise<ObservedSupervisor> {
      const { file: _file, supervisorState: _state, ...observed } = await adapter.observeLab(ctx);
      return observed;
    },
    recordNodeId: (
      ctx: NodeContext,
      nodeId: string,
    ): Promise<{ readonly previous: string | null }> => recordLabNodeId(link, ctx, nodeId),
  };
  return adapter;
}
