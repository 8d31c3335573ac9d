/**
 * The `launchd.agents` prober (layer `runtime`): fleet's LaunchAgents in the user's `gui` domain.
 *
 * - The controller's agent: its plist on disk against what fleet generates for the command it
 *   holds (a hand edit is drift), loaded or not, running or not, its last exit, whether launchd
 *   runs what the file says (a file changed since its bootstrap is not what runs), and — as every
 *   supervisor's prober — the `current` generation and the `--node-id` it runs with.
 * - Every scheduled report's agent (`dev.fleet.report-*`, what `fleet schedule install` writes):
 *   loaded, its last run's exit (0, or 1 — drift found — is a run that worked), changed on disk
 *   since launchd loaded it. An agent under the old label scheme (`dev.fleet.schedule.*`) is stale:
 *   `fleet schedule install` of the same report replaces it (docs/scheduled-reports.md).
 */
import { readdir } from 'node:fs/promises';
import {
  homePath,
  readDefinitionFile,
  readPointerFacts,
  runtimeDisagreements,
  shortBuildId as short,
  type DriftItem,
  type JsonObject,
  type NodeContext,
  type ProbeDesired,
  type Prober,
} from '@fleet/core/plugin';
import { createLaunchdAdapter, type LaunchdAdapter } from './adapter.js';
import { AGENTS_DIR, launchAgent, plistPath, readAgent } from './agent-plist.js';

/** The labels `fleet schedule install` writes, and the scheme before it (migrated). */
export const REPORT_LABEL = /^dev\.fleet\.report-[a-z][a-z-]{0,40}$/;
export const LEGACY_REPORT_LABEL = /^dev\.fleet\.schedule\.[A-Za-z0-9.-]{1,60}$/;

export interface ScheduleAgentFacts extends JsonObject {
  readonly label: string;
  readonly path: string;
  readonly legacy: boolean;
  readonly loaded: boolean;
  readonly state: string | null;
  readonly lastExitCode: number | null;
  readonly lastSignal: string | null;
  /** The plist's ProgramArguments differ from what launchd loaded. */
  readonly changedOnDisk: boolean;
}

export interface AgentFacts extends JsonObject {
  readonly label: string;
  readonly plist: string;
  readonly present: boolean;
  readonly running: boolean;
  readonly state: string;
  readonly pid: number | null;
  readonly fileMissing: boolean;
  /** The plist on disk is not what fleet generates for the command it holds. */
  readonly handEdited: boolean;
  readonly changedOnDisk: boolean;
  readonly generation: string | null;
  readonly nodeIdFlag: string | null;
  readonly current: string | null;
  readonly currentState: string;
  readonly controllerNodeId: string;
  readonly schedules: ScheduleAgentFacts[];
  readonly error: string | null;
}

/** The report agents' labels in `~/Library/LaunchAgents`, current and legacy, sorted. */
async function scheduleLabels(home: string): Promise<string[]> {
  const names = await readdir(homePath(home, AGENTS_DIR)).catch(() => [] as string[]);
  return names
    .filter((name) => name.endsWith('.plist'))
    .map((name) => name.slice(0, -'.plist'.length))
    .filter((label) => REPORT_LABEL.test(label) || LEGACY_REPORT_LABEL.test(label))
    .sort();
}

async function scheduleFacts(
  adapter: LaunchdAdapter,
  ctx: NodeContext,
  label: string,
): Promise<ScheduleAgentFacts> {
  const content = await readDefinitionFile(ctx.home, plistPath(label));
  const service = await adapter.print(ctx, label);
  const file = content === null ? null : readAgent(content);
  return {
    label,
    path: plistPath(label),
    legacy: LEGACY_REPORT_LABEL.test(label),
    loaded: service !== null,
    state: service?.state ?? null,
    lastExitCode: service?.lastExitCode ?? null,
    lastSignal: service?.lastSignal ?? null,
    changedOnDisk:
      service !== null &&
      file !== null &&
      JSON.stringify(file.command) !== JSON.stringify(service.arguments),
  };
}

/** Whether `content` is byte for byte what fleet generates for the command it holds (pure). */
export function generatedByFleet(content: string, label: string, home: string): boolean {
  const facts = readAgent(content);
  if (facts.command.length === 0 || facts.nodeIdFlag === null) return false;
  try {
    const { NODE_ENV: _production, ...environment } = facts.environment;
    return (
      launchAgent({ home, nodeId: facts.nodeIdFlag, command: facts.command, environment }, label)
        .content === content
    );
  } catch {
    return false;
  }
}

export function createAgentProber(adapter = createLaunchdAdapter()): Prober<AgentFacts> {
  return {
    id: 'launchd.agents',
    layer: 'runtime',

    async collect(ctx: NodeContext): Promise<AgentFacts> {
      const label = await adapter.labelName(ctx).catch(() => 'dev.fleet.controller');
      const base = {
        label,
        plist: plistPath(label),
        ...(await readPointerFacts(ctx.home, ctx.platform)),
        controllerNodeId: ctx.nodeId,
      };
      try {
        const agent = await adapter.observeAgent(ctx, label);
        const schedules = await Promise.all(
          (await scheduleLabels(ctx.home)).map((l) => scheduleFacts(adapter, ctx, l)),
        );
        return {
          ...base,
          present: agent.present,
          running: agent.running,
          state: agent.state,
          pid: agent.pid ?? null,
          fileMissing: agent.content === null,
          handEdited: agent.content !== null && !generatedByFleet(agent.content, label, ctx.home),
          changedOnDisk: agent.needsReload === true,
          generation: agent.generation ?? null,
          nodeIdFlag: agent.nodeIdFlag ?? null,
          schedules,
          error: null,
        };
      } catch (error) {
        return {
          ...base,
          present: false,
          running: false,
          state: 'unknown',
          pid: null,
          fileMissing: false,
          handEdited: false,
          changedOnDisk: false,
          generation: null,
          nodeIdFlag: null,
          schedules: [],
          error: (error as Error).message,
        };
      }
    },

    evaluate(facts: AgentFacts, desired: ProbeDesired): readonly DriftItem[] {
      const item = (path: string, state: DriftItem['state'], detail: string): DriftItem => ({
        layer: 'runtime',
        path,
        state,
        detail,
      });
      if (facts.error !== null)
        return [item(facts.plist, 'error', `launchd could not be asked: ${facts.error}`)];
      const items: DriftItem[] = [controllerItem(facts, desired, item)];
      for (const schedule of facts.schedules) items.push(scheduleItem(schedule, item));
      return items;
    },
  };
}

type Item = (path: string, state: DriftItem['state'], detail: string) => DriftItem;

function controllerItem(facts: AgentFacts, desired: ProbeDesired, item: Item): DriftItem {
  if (!facts.present && facts.fileMissing)
    return item(
      facts.plist,
      'missing',
      'no controller agent: neither its plist nor launchd has it',
    );
  const expectedNode = desired.variables['node_id'] ?? facts.controllerNodeId;
  const problems: string[] = [];
  if (facts.fileMissing) problems.push('its plist is gone: the next login will not load it');
  if (!facts.present) problems.push('launchd has not loaded it');
  else if (!facts.running) problems.push(`it is not running (${facts.state})`);
  if (facts.handEdited) problems.push('its plist is not what fleet generated (edited by hand?)');
  if (facts.changedOnDisk)
    problems.push('its plist changed since launchd loaded it (launchd reads it at bootstrap only)');
  problems.push(...runtimeDisagreements(facts, expectedNode));
  if (problems.length > 0) return item(facts.plist, 'stale', problems.join('; '));
  return item(
    facts.plist,
    'current',
    `running ${facts.generation === null ? 'a development build' : `generation ${short(facts.generation)}`} (pid ${facts.pid ?? '?'}) with --node-id ${expectedNode}`,
  );
}

function scheduleItem(schedule: ScheduleAgentFacts, item: Item): DriftItem {
  const problems: string[] = [];
  if (schedule.legacy)
    problems.push(
      'it carries the old label scheme (dev.fleet.schedule.*): fleet schedule install of the same report replaces it with dev.fleet.report-*',
    );
  if (!schedule.loaded) problems.push('its plist is present but launchd has not loaded it');
  if (schedule.lastExitCode !== null && schedule.lastExitCode > 1)
    problems.push(`its last run exited ${schedule.lastExitCode}`);
  if (schedule.lastSignal !== null) problems.push(`its last run was ended: ${schedule.lastSignal}`);
  if (schedule.changedOnDisk) problems.push('its plist changed since launchd loaded it');
  if (problems.length > 0) return item(schedule.path, 'stale', problems.join('; '));
  return item(
    schedule.path,
    'current',
    `loaded (${schedule.state ?? '?'}), last exit ${schedule.lastExitCode ?? '(never exited)'}`,
  );
}

export const prober = createAgentProber();
