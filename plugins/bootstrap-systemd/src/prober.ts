/**
 * The `systemd-user.unit` prober (layer `runtime`): on the node it observes the controller's unit
 * (present, enabled, running, which generation and `--node-id` the running process — or else the
 * unit file — carries, whether systemd still needs a daemon-reload), the `current` generation
 * pointer and lingering; on the operator side it reports one drift item: `current` when all agree
 * with the desired node id, `missing` without a unit, `stale` with every disagreement listed.
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
import { createSystemdUserAdapter } from './adapter.js';
import { unitPath } from './unit.js';

export interface UnitFacts extends JsonObject {
  readonly unit: string;
  readonly present: boolean;
  readonly enabled: boolean;
  readonly running: boolean;
  readonly state: string;
  readonly pid: number | null;
  readonly needsReload: boolean;
  /** Read from the running process (`process`) or else the unit file (`file`). */
  readonly source: string | null;
  readonly generation: string | null;
  readonly nodeIdFlag: string | null;
  /** What the unit file on disk says. */
  readonly fileGeneration: string | null;
  readonly fileNodeIdFlag: string | null;
  /** The `current` pointer: a build id, or `null` (see `currentState`). */
  readonly current: string | null;
  readonly currentState: string;
  readonly linger: string;
  /** The node id the controller answering this probe runs with. */
  readonly controllerNodeId: string;
  /** Why the supervisor could not be observed, if it could not. */
  readonly error: string | null;
}

export function createUnitProber(adapter = createSystemdUserAdapter()): Prober<UnitFacts> {
  return {
    id: 'systemd-user.unit',
    layer: 'runtime',

    async collect(ctx: NodeContext): Promise<UnitFacts> {
      const base = {
        unit: unitPath(await adapter.unitName(ctx).catch(() => 'fleet-controller.service')),
        ...(await readPointerFacts(ctx.home, 'linux')),
        linger: await adapter.linger(ctx),
        controllerNodeId: ctx.nodeId,
      };
      try {
        const unit = await adapter.observeUnit(ctx);
        return {
          ...base,
          present: unit.present,
          enabled: unit.enabled,
          running: unit.running,
          state: unit.state,
          pid: unit.pid ?? null,
          needsReload: unit.needsReload === true,
          source: unit.source ?? null,
          generation: unit.generation ?? null,
          nodeIdFlag: unit.nodeIdFlag ?? null,
          fileGeneration: unit.file?.generation ?? null,
          fileNodeIdFlag: unit.file?.nodeIdFlag ?? null,
          error: null,
        };
      } catch (error) {
        return {
          ...base,
          present: false,
          enabled: false,
          running: false,
          state: 'unknown',
          pid: null,
          needsReload: false,
          source: null,
          generation: null,
          nodeIdFlag: null,
          fileGeneration: null,
          fileNodeIdFlag: null,
          error: (error as Error).message,
        };
      }
    },

    evaluate(facts: UnitFacts, desired: ProbeDesired): readonly DriftItem[] {
      const item = (state: DriftItem['state'], detail: string): DriftItem[] => [
        { layer: 'runtime', path: facts.unit, state, detail },
      ];
      if (facts.error !== null) return item('error', `systemd could not be asked: ${facts.error}`);
      if (!facts.present)
        return item('missing', 'no controller unit is loaded in the user manager');
      const expectedNode = desired.variables['node_id'] ?? facts.controllerNodeId;
      const problems: string[] = [];
      if (!facts.enabled) problems.push('the unit is not enabled');
      if (!facts.running) problems.push(`the unit is not running (${facts.state})`);
      if (facts.needsReload)
        problems.push(
          'the unit file changed but systemd has not reloaded it (NeedDaemonReload=yes)',
        );
      problems.push(...runtimeDisagreements(facts, expectedNode));
      if (facts.linger === 'no')
        problems.push('the user has no lingering: the unit stops at logout');
      if (problems.length > 0) return item('stale', problems.join('; '));
      return item(
        'current',
        `running ${facts.generation === null ? 'a development build' : `generation ${short(facts.generation)}`} (pid ${facts.pid ?? '?'}) with --node-id ${expectedNode}`,
      );
    },
  };
}

export const prober = createUnitProber();
