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

const NOT_FOUND = /cannot find the file specified|does not exist/i;

export function createWindowsTaskAdapter(
  options: WindowsTaskAdapterOptions = {},
): BootstrapAdapter & {
  queryList(ctx: NodeContext, task?: string): Promise<Record<string, string> | null>;
  launchDetached(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch>;
} {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const schtasks = (ctx: NodeContext, ...args: string[]): Promise<ProcessResult> =>
    ctx.processes.run({ command: 'schtasks', args, timeoutMs });
  const must = async (
    ctx: NodeContext,
    what: string,
    ...args: string[]
  ): Promise<ProcessResult> => {
    const result = await schtasks(ctx, ...args);
    if (result.exitCode !== 0 || result.timedOut) {
      throw new FleetError(
        'ACTION_FAILED',
        `schtasks ${args.join(' ')} (${what}) failed: ${excerpt(result)}`,
      );
    }
    return result;
  };
  /** The registered task XML, or `null` when no task is registered. */
  const queryXml = async (ctx: NodeContext): Promise<string | null> => {
    const result = await schtasks(ctx, '/Query', '/TN', TASK_NAME, '/XML');
    if (result.exitCode !== 0 && NOT_FOUND.test(result.stderr + result.stdout)) return null;
    if (result.exitCode !== 0)
      throw new FleetError('ACTION_FAILED', `schtasks /Query /XML failed: ${excerpt(result)}`);
    return result.stdout;
  };

  /**
   * The build id of the generation a task's command runs: its directory carries the short name on
   * Windows (docs/runtime-lifecycle.md, "Windows paths"), resolved from that generation's manifest;
   * left as it is when nothing there names a build (then it matches no build id, and status says so).
   */
  const buildIdOf = async (ctx: NodeContext, name: string | null): Promise<string | null> =>
    name === null
      ? null
      : ((await resolveGenerationName(runtimeLayout(ctx.home, ctx.platform), name)) ?? name);

  const adapter = {
    supervisor: 'windows-task' as const,
    platforms: ['win32'] as const,
    pointer: 'file' as const,

    definition: (input: SupervisorDefinitionInput) => taskXml(input, options),
    readDefinition: (content: string) => {
      const { enabled: _enabled, ...facts } = readTask(content);
      return facts;
    },

    async queryList(ctx: NodeContext, task = TASK_NAME): Promise<Record<string, string> | null> {
      const result = await schtasks(ctx, '/Query', '/TN', task, '/FO', 'LIST', '/V');
      if (result.exitCode !== 0 && NOT_FOUND.test(result.stderr + result.stdout)) return null;
      if (result.exitCode !== 0)
        throw new FleetError('ACTION_FAILED', `schtasks /Query failed: ${excerpt(result)}`);
      return parseList(result.stdout);
    },

    async preflight(ctx: NodeContext): Promise<readonly SupervisorProblem[]> {
      const result = await schtasks(ctx, '/Query', '/TN', TASK_NAME, '/XML');
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
    },

    async installDefinition(ctx: NodeContext, definition: SupervisorDefinition): Promise<void> {
      const file = await writeDefinitionFile(ctx.home, definition);
      await must(ctx, 'registering the task', '/Create', '/XML', file, '/TN', TASK_NAME, '/F');
      const registered = await queryXml(ctx);
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
    },

    async start(ctx: NodeContext): Promise<void> {
      await must(ctx, 'starting the controller', '/Run', '/TN', TASK_NAME);
    },

    async stop(ctx: NodeContext): Promise<void> {
      const result = await schtasks(ctx, '/End', '/TN', TASK_NAME);
      if (result.exitCode !== 0 && !/not running/i.test(result.stderr + result.stdout)) {
        throw new FleetError(
          'ACTION_FAILED',
          `schtasks /End (stopping the controller) failed: ${excerpt(result)}`,
        );
      }
      for (let poll = 0; poll < (options.endPolls ?? 100); poll += 1) {
        if ((await adapter.queryList(ctx))?.['Status'] !== 'Running') return;
        await sleep(100);
      }
      throw new FleetError('ACTION_FAILED', 'the controller task is still running after /End');
    },

    async restart(ctx: NodeContext): Promise<void> {
      await adapter.stop(ctx);
      await adapter.start(ctx);
    },

    async observe(ctx: NodeContext): Promise<ObservedSupervisor> {
      const xml = await queryXml(ctx);
      if (xml === null) {
        const file = await readDefinitionFile(ctx.home, TASK_DEFINITION_PATH);
        const read = file === null ? null : readTask(file);
        const facts = read && { ...read, generation: await buildIdOf(ctx, read.generation) };
        return {
          present: false,
          enabled: false,
          running: false,
          state: 'not registered',
          ...(facts?.generation ? { generation: facts.generation } : {}),
          ...(facts?.nodeIdFlag ? { nodeIdFlag: facts.nodeIdFlag } : {}),
          ...(facts ? { source: 'file' as const, command: facts.command } : {}),
        };
      }
      const read = readTask(xml);
      const task = { ...read, generation: await buildIdOf(ctx, read.generation) };
      const list = (await adapter.queryList(ctx)) ?? {};
      const status = list['Status'] ?? 'unknown';
      return {
        present: true,
        enabled: task.enabled && list['Scheduled Task State'] !== 'Disabled',
        running: status === 'Running',
        state:
          status === 'Running' ? status : `${status} (last result ${list['Last Result'] ?? '?'})`,
        ...(task.generation ? { generation: task.generation } : {}),
        ...(task.nodeIdFlag ? { nodeIdFlag: task.nodeIdFlag } : {}),
        command: task.command,
        source: 'supervisor' as const,
        detail: `task ${list['TaskName'] ?? TASK_NAME}, last run ${list['Last Run Time'] ?? '?'}`,
      };
    },

    /**
     * A job of its own (contract §12: the runner leaves the controller's reach): `/End` of the
     * controller's task ends that task's whole job object, so the runner and the node-id switch
     * run as a task of their own (`fleet-<slot>`, registered with `/Create /XML /F` and started
     * with `/Run`) — which Task Scheduler ends only with itself. Task Scheduler reports no pid
     * (the job writes its own) and sets no environment (the job gets the user's, as the
     * controller's task does).
     */
    async launchDetached(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch> {
      const task = `fleet-${job.slot}`;
      if ((await adapter.queryList(ctx, task))?.['Status'] === 'Running') {
        throw new FleetError(
          'LOCKED',
          `the task ${task} still runs an earlier job; nothing was started`,
        );
      }
      const definition = jobTaskXml(task, job.argv, job.cwd);
      const file = await writeDefinitionFile(ctx.home, definition);
      await must(ctx, 'registering the job', '/Create', '/XML', file, '/TN', task, '/F');
      await must(ctx, 'starting the job', '/Run', '/TN', task);
      return { started: 'supervisor', pid: null, detail: `the scheduled task ${task} of its own` };
    },

    async recordNodeId(
      ctx: NodeContext,
      nodeId: string,
    ): Promise<{ readonly previous: string | null }> {
      const content =
        (await readDefinitionFile(ctx.home, TASK_DEFINITION_PATH)) ?? (await queryXml(ctx));
      if (content === null)
        throw new FleetError(
          'ACTION_FAILED',
          `no controller task ${TASK_NAME} to record --node-id in`,
        );
      const facts = readTask(content);
      if (facts.command.length === 0)
        throw new FleetError(
          'ACTION_FAILED',
          `the controller task has no Exec action to record --node-id in`,
        );
      await adapter.installDefinition(
        ctx,
        taskXml({ home: ctx.home, nodeId, command: withNodeId(facts.command, nodeId) }, options),
      );
      return { previous: facts.nodeIdFlag };
    },
  };
  return adapter;
}
