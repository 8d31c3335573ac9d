/**
 * The `windows-task.task` prober (layer `runtime`): on the node it observes the controller's
 * scheduled task (registered, enabled, running, which generation and `--node-id` its action runs)
 * and the `current` pointer file; on the operator side it reports one drift item: `current` when
 * all agree with the desired node id, `missing` without a task, `stale` with every disagreement.
 */
import {
  readPointerFacts,
  runtimeDisagreements,
  shortBuildId as short,
  type DriftItem,
  type JsonObject,
  type NodeContext,
  type ProbeDesired,
  type Prober,
} from '@fleet/core/plugin';
import { createWindowsTaskAdapter } from './adapter.js';
import { TASK_NAME } from './task-xml.js';

export interface TaskFacts extends JsonObject {
  readonly task: string;
  readonly present: boolean;
  readonly enabled: boolean;
  readonly running: boolean;
  readonly state: string;
  readonly generation: string | null;
  readonly nodeIdFlag: string | null;
  readonly current: string | null;
  readonly currentState: string;
  readonly controllerNodeId: string;
  readonly error: string | null;
}

export function createTaskProber(adapter = createWindowsTaskAdapter()): Prober<TaskFacts> {
  return {
    id: 'windows-task.task',
    layer: 'runtime',

    async collect(ctx: NodeContext): Promise<TaskFacts> {
      const base = {
        task: `\\${TASK_NAME}`,
        ...(await readPointerFacts(ctx.home, 'win32')),
        controllerNodeId: ctx.nodeId,
      };
      try {
        const observed = await adapter.observe(ctx);
        return {
          ...base,
          present: observed.present,
          enabled: observed.enabled,
          running: observed.running,
          state: observed.state,
          generation: observed.generation ?? null,
          nodeIdFlag: observed.nodeIdFlag ?? null,
          error: null,
        };
      } catch (error) {
        return {
          ...base,
          present: false,
          enabled: false,
          running: false,
          state: 'unknown',
          generation: null,
          nodeIdFlag: null,
          error: (error as Error).message,
        };
      }
    },

    evaluate(facts: TaskFacts, desired: ProbeDesired): readonly DriftItem[] {
      const item = (state: DriftItem['state'], detail: string): DriftItem[] => [
        { layer: 'runtime', path: facts.task, state, detail },
      ];
      if (facts.error !== null)
        return item('error', `Task Scheduler could not be asked: ${facts.error}`);
      if (!facts.present) return item('missing', `no scheduled task ${facts.task} is registered`);
      const expectedNode = desired.variables['node_id'] ?? facts.controllerNodeId;
      const problems: string[] = [];
      if (!facts.enabled) problems.push('the task is disabled');
      if (!facts.running) problems.push(`the task is not running (${facts.state})`);
      problems.push(...runtimeDisagreements(facts, expectedNode));
      if (problems.length > 0) return item('stale', problems.join('; '));
      return item(
        'current',
        `running generation ${short(facts.generation)} with --node-id ${expectedNode}`,
      );
    },
  };
}

export const prober = createTaskProber();
