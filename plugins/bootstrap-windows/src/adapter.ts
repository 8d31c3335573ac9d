/**
 * The windows-task bootstrap adapter's node half (contract §12): writes the task XML (UTF-16LE) under
 * `%LOCALAPPDATA%\fleet\supervisor\`, registers it with `schtasks /Create /XML <file> /TN
 * fleet-controller /F`, starts and ends it with `/Run` and `/End`, and observes it with `/Query
 * /XML` (the registered definition: which generation, which `--node-id`) and `/Query /FO LIST /V`
 * (the status) — always through `ctx.processes`, never a shell. Task Scheduler reports no pid.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  FleetError,
  readDefinitionFile,
  resolveGenerationName,
  runtimeLayout,
  withNodeId,
  writeDefinitionFile,
  writeSupervisorRecord,
  type BootstrapAdapter,
  type DetachedJob,
  type DetachedLaunch,
  type NodeContext,
  type ObservedSupervisor,
  type ProcessResult,
  type SupervisorDefinition,
  type SupervisorDefinitionInput,
  type SupervisorProblem,
} from '@fleet/core/plugin';
import {
  jobTaskXml,
  readTask,
  TASK_DEFINITION_PATH,
  TASK_NAME,
  taskXml,
  type TaskOptions,
} from './task-xml.js';

export interface WindowsTaskAdapterOptions extends TaskOptions {
  /** How long one `schtasks` may take (default 60 s). */
  readonly timeoutMs?: number;
  /** Polls of `/Query` while waiting for an ended task to stop running (default 100 × 100 ms). */
  readonly endPolls?: number;
}

/** `Key: Value` lines of `schtasks /Query /FO LIST /V`. */
export function parseList(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) out[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return out;
}

const excerpt = (result: ProcessResult): string =>
  (result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`)
    .split(/\r?\n/)
    .slice(0, 4)
    .join(' / ')
    .slice(0, 500);

/** What a task's XML says: its action's facts, and whether it is enabled. */
type TaskFacts = ReturnType<typeof readTask>;

const NOT_FOUND = /cannot find the file specified|does not exist/i;

/** `schtasks`, always through `ctx.processes` with a time limit. */
class Schtasks {
  constructor(private readonly timeoutMs: number) {}

  run(ctx: NodeContext, ...args: string[]): Promise<ProcessResult> {
    return ctx.processes.run({ command: 'schtasks', args, timeoutMs: this.timeoutMs });
  }

  /** `schtasks ARGS`, refused (ACTION_FAILED, saying `what`) unless it succeeds. */
  async must(ctx: NodeContext, what: string, ...args: string[]): Promise<ProcessResult> {
    const result = await this.run(ctx, ...args);
    if (result.exitCode !== 0 || result.timedOut) {
      throw new FleetError(
        'ACTION_FAILED',
        `schtasks ${args.join(' ')} (${what}) failed: ${excerpt(result)}`,
      );
    }
    return result;
  }

  /** The registered task XML, or `null` when no task is registered. */
  async queryXml(ctx: NodeContext): Promise<string | null> {
    const result = await this.run(ctx, '/Query', '/TN', TASK_NAME, '/XML');
    if (result.exitCode !== 0 && NOT_FOUND.test(result.stderr + result.stdout)) return null;
    if (result.exitCode !== 0)
      throw new FleetError('ACTION_FAILED', `schtasks /Query /XML failed: ${excerpt(result)}`);
    return result.stdout;
  }

  /** A task's status (`/Query /FO LIST /V`), or `null` when it is not registered. */
  async queryList(ctx: NodeContext, task = TASK_NAME): Promise<Record<string, string> | null> {
    const result = await this.run(ctx, '/Query', '/TN', task, '/FO', 'LIST', '/V');
    if (result.exitCode !== 0 && NOT_FOUND.test(result.stderr + result.stdout)) return null;
    if (result.exitCode !== 0)
      throw new FleetError('ACTION_FAILED', `schtasks /Query failed: ${excerpt(result)}`);
    return parseList(result.stdout);
  }
}

/**
 * The build id of the generation a task's command runs: its directory carries the short name on
 * Windows (docs/runtime-lifecycle.md, "Windows paths"), resolved from that generation's manifest;
 * left as it is when nothing there names a build (then it matches no build id, and status says so).
 */
async function buildIdOf(ctx: NodeContext, name: string | null): Promise<string | null> {
  return name === null
    ? null
    : ((await resolveGenerationName(runtimeLayout(ctx.home, ctx.platform), name)) ?? name);
}

async function preflightTask(schtasks: Schtasks, ctx: NodeContext): Promise<SupervisorProblem[]> {
  const result = await schtasks.run(ctx, '/Query', '/TN', TASK_NAME, '/XML');
  if (
    result.exitCode === -1 ||
    (result.exitCode !== 0 && !NOT_FOUND.test(result.stderr + result.stdout))
  ) {
    return [
      {
        code: 'SCHTASKS_UNAVAILABLE',
        message: `Task Scheduler cannot be queried: ${excerpt(result)}`,
      },
    ];
  }
  return [];
}

/** Writes the task XML, registers it, checks Task Scheduler runs its action, and records it. */
async function installTask(
  schtasks: Schtasks,
  ctx: NodeContext,
  definition: SupervisorDefinition,
): Promise<void> {
  const file = await writeDefinitionFile(ctx.home, definition);
  await schtasks.must(ctx, 'registering the task', '/Create', '/XML', file, '/TN', TASK_NAME, '/F');
  const registered = await schtasks.queryXml(ctx);
  const want = readTask(definition.content).command;
  const got = registered === null ? [] : readTask(registered).command;
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new FleetError(
      'ACTION_FAILED',
      `Task Scheduler did not register the new action (it runs ${JSON.stringify(got)})`,
    );
  }
  // The node records what runs its controller (contract §12).
  await writeSupervisorRecord(ctx.home, {
    supervisor: 'windows-task',
    name: TASK_NAME,
    definition: TASK_DEFINITION_PATH,
  });
}

/** Ends the controller's task and waits (`endPolls` × 100 ms) until it no longer runs. */
async function endTask(
  schtasks: Schtasks,
  ctx: NodeContext,
  endPolls: number,
  queryList: (ctx: NodeContext) => Promise<Record<string, string> | null>,
): Promise<void> {
  const result = await schtasks.run(ctx, '/End', '/TN', TASK_NAME);
  if (result.exitCode !== 0 && !/not running/i.test(result.stderr + result.stdout)) {
    throw new FleetError(
      'ACTION_FAILED',
      `schtasks /End (stopping the controller) failed: ${excerpt(result)}`,
    );
  }
  for (let poll = 0; poll < endPolls; poll += 1) {
    if ((await queryList(ctx))?.['Status'] !== 'Running') return;
    await sleep(100);
  }
  throw new FleetError('ACTION_FAILED', 'the controller task is still running after /End');
}

/** What the task file says while no task is registered (`read`: null when there is none). */
export function unregisteredObservation(read: TaskFacts | null): ObservedSupervisor {
  return {
    present: false,
    enabled: false,
    running: false,
    state: 'not registered',
    ...(read?.generation ? { generation: read.generation } : {}),
    ...(read?.nodeIdFlag ? { nodeIdFlag: read.nodeIdFlag } : {}),
    ...(read ? { source: 'file' as const, command: read.command } : {}),
  };
}

/** What the registered task (`task`, its XML read) and its status (`list`) say together. */
export function registeredObservation(
  task: TaskFacts,
  list: Readonly<Record<string, string>>,
): ObservedSupervisor {
  const status = list['Status'] ?? 'unknown';
  return {
    present: true,
    enabled: task.enabled && list['Scheduled Task State'] !== 'Disabled',
    running: status === 'Running',
    state: status === 'Running' ? status : `${status} (last result ${list['Last Result'] ?? '?'})`,
    ...(task.generation ? { generation: task.generation } : {}),
    ...(task.nodeIdFlag ? { nodeIdFlag: task.nodeIdFlag } : {}),
    command: task.command,
    source: 'supervisor' as const,
    detail: `task ${list['TaskName'] ?? TASK_NAME}, last run ${list['Last Run Time'] ?? '?'}`,
  };
}

async function observeTask(
  schtasks: Schtasks,
  ctx: NodeContext,
  queryList: (ctx: NodeContext) => Promise<Record<string, string> | null>,
): Promise<ObservedSupervisor> {
  const xml = await schtasks.queryXml(ctx);
  if (xml === null) {
    const file = await readDefinitionFile(ctx.home, TASK_DEFINITION_PATH);
    const read = file === null ? null : readTask(file);
    return unregisteredObservation(
      read && { ...read, generation: await buildIdOf(ctx, read.generation) },
    );
  }
  const read = readTask(xml);
  const task = { ...read, generation: await buildIdOf(ctx, read.generation) };
  return registeredObservation(task, (await queryList(ctx)) ?? {});
}

/**
 * A job of its own (contract §12: the runner leaves the controller's reach): `/End` of the
 * controller's task ends that task's whole job object, so the runner and the node-id switch
 * run as a task of their own (`fleet-<slot>`, registered with `/Create /XML /F` and started
 * with `/Run`) — which Task Scheduler ends only with itself. Task Scheduler reports no pid
 * (the job writes its own) and sets no environment (the job gets the user's, as the
 * controller's task does).
 */
async function launchJobTask(
  schtasks: Schtasks,
  ctx: NodeContext,
  job: DetachedJob,
  queryList: (ctx: NodeContext, task: string) => Promise<Record<string, string> | null>,
): Promise<DetachedLaunch> {
  const task = `fleet-${job.slot}`;
  if ((await queryList(ctx, task))?.['Status'] === 'Running') {
    throw new FleetError(
      'LOCKED',
      `the task ${task} still runs an earlier job; nothing was started`,
    );
  }
  const definition = jobTaskXml(task, job.argv, job.cwd);
  const file = await writeDefinitionFile(ctx.home, definition);
  await schtasks.must(ctx, 'registering the job', '/Create', '/XML', file, '/TN', task, '/F');
  await schtasks.must(ctx, 'starting the job', '/Run', '/TN', task);
  return { started: 'supervisor', pid: null, detail: `the scheduled task ${task} of its own` };
}

/** The controller's task with `--node-id` changed in its action, and the id it had. */
async function taskWithNodeId(
  schtasks: Schtasks,
  ctx: NodeContext,
  nodeId: string,
  options: TaskOptions,
): Promise<{ readonly definition: SupervisorDefinition; readonly previous: string | null }> {
  const content =
    (await readDefinitionFile(ctx.home, TASK_DEFINITION_PATH)) ?? (await schtasks.queryXml(ctx));
  if (content === null)
    throw new FleetError('ACTION_FAILED', `no controller task ${TASK_NAME} to record --node-id in`);
  const facts = readTask(content);
  if (facts.command.length === 0)
    throw new FleetError(
      'ACTION_FAILED',
      `the controller task has no Exec action to record --node-id in`,
    );
  const definition = taskXml(
    { home: ctx.home, nodeId, command: withNodeId(facts.command, nodeId) },
    options,
  );
  return { definition, previous: facts.nodeIdFlag };
}

export function createWindowsTaskAdapter(
  options: WindowsTaskAdapterOptions = {},
): BootstrapAdapter & {
  queryList(ctx: NodeContext, task?: string): Promise<Record<string, string> | null>;
  launchDetached(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch>;
} {
  const schtasks = new Schtasks(options.timeoutMs ?? 60_000);
  const queryList = (ctx: NodeContext, task?: string) => adapter.queryList(ctx, task);
  const adapter = {
    supervisor: 'windows-task' as const,
    platforms: ['win32'] as const,
    pointer: 'file' as const,
    definition: (input: SupervisorDefinitionInput) => taskXml(input, options),
    readDefinition: (content: string) => {
      const { enabled: _enabled, ...facts } = readTask(content);
      return facts;
    },
    queryList: (ctx: NodeContext, task = TASK_NAME): Promise<Record<string, string> | null> =>
      schtasks.queryList(ctx, task),
    preflight: (ctx: NodeContext): Promise<readonly SupervisorProblem[]> =>
      preflightTask(schtasks, ctx),
    installDefinition: (ctx: NodeContext, definition: SupervisorDefinition): Promise<void> =>
      installTask(schtasks, ctx, definition),
    async start(ctx: NodeContext): Promise<void> {
      await schtasks.must(ctx, 'starting the controller', '/Run', '/TN', TASK_NAME);
    },
    stop: (ctx: NodeContext): Promise<void> =>
      endTask(schtasks, ctx, options.endPolls ?? 100, queryList),
    async restart(ctx: NodeContext): Promise<void> {
      await adapter.stop(ctx);
      await adapter.start(ctx);
    },
    observe: (ctx: NodeContext): Promise<ObservedSupervisor> =>
      observeTask(schtasks, ctx, queryList),
    launchDetached: (ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch> =>
      launchJobTask(schtasks, ctx, job, queryList),
    async recordNodeId(
      ctx: NodeContext,
      nodeId: string,
    ): Promise<{ readonly previous: string | null }> {
      const { definition, previous } = await taskWithNodeId(schtasks, ctx, nodeId, options);
      await adapter.installDefinition(ctx, definition);
      return { previous };
    },
  };
  return adapter;
}
