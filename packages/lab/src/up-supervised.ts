/**
 * `fleet lab up` under the lab supervisor (up.ts): one detached `fleet lab supervise` per node, or
 * one virtual process for all (virtual.ts), each waited for until its supervisor reports the
 * controller running. If anything fails after a process started, every process this run started
 * is stopped again: a failed `lab up` leaves nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LabDocument } from '@fleet/core';
import * as core from '@fleet/core';
import type { LabSupervisorState } from './supervisor-protocol.js';
import { nodeLayout, type LabLayout } from './layout.js';
import { LAB_CONTROLLER_DEFINITION_PATH } from './definition.js';
import { stopLabProcesses, type LabProcess } from './processes.js';
import { recordedProcesses } from './recorded.js';
import { readSupervisorState } from './state.js';
import { finishLabUp, type LabStartedNode } from './up-finish.js';
import type { LabKeys } from './up-nodes.js';
import type { LabUpPlan } from './up-plan.js';
import type { LabUpOptions } from './up-options.js';

interface Started {
  readonly child: ChildProcess;
  /** Where its output goes (quoted when it fails). */
  readonly log: string;
  exited: string | undefined;
}

export async function labUpSupervised(
  options: LabUpOptions,
  plan: LabUpPlan,
  keys: LabKeys,
): Promise<LabDocument> {
  const progress = options.progress ?? (() => undefined);
  const { lab, hosts } = plan;
  // The node records what runs its controller (contract §12): the lab supervisor.
  for (const [host, home] of plan.homes) {
    await core.writeSupervisorRecord(home, {
      supervisor: 'lab',
      name: host,
      definition: LAB_CONTROLLER_DEFINITION_PATH,
    });
  }
  const children: Started[] = [];
  try {
    const readyTimeout =
      options.readyTimeoutMs ?? 60_000 + (options.virtual ? 100 * hosts.length : 0);
    const deadline = Date.now() + readyTimeout;
    const start = options.virtual ? startVirtualNodes : startNodeSupervisors;
    const states = await start(options.fleetBin, plan, children, deadline, progress);
    const nodes = new Map<string, LabStartedNode>();
    for (const [host, state] of states) {
      nodes.set(host, {
        controller: `http://127.0.0.1:${state.flags.port}`,
        nodeId: state.flags.nodeId,
        pid: state.pid as number,
      });
    }
    return await finishLabUp({
      plan,
      keys,
      nodes,
      repo: { domains: options.registry.domains().map((entry) => entry.descriptor) },
      deadline,
      progress,
    });
  } catch (error) {
    progress('lab up failed: stopping what it started');
    await rollBack(lab, children);
    throw error;
  }
}

/** One process runs every node (virtual.ts); each node's state is waited for in turn. */
async function startVirtualNodes(
  fleetBin: string,
  { lab, hosts }: LabUpPlan,
  children: Started[],
  deadline: number,
  progress: (line: string) => void,
): Promise<Map<string, LabSupervisorState>> {
  progress(`starting ${hosts.length} virtual node${hosts.length === 1 ? '' : 's'} in one process`);
  const started = await spawnDetached(
    fleetBin,
    ['--dir', lab.dir, '--virtual', '--hosts', String(hosts.length)],
    lab.nodes,
    lab.virtualLog,
  );
  children.push(started);
  const states = new Map<string, LabSupervisorState>();
  for (const host of hosts) states.set(host, await waitReady(lab, host, started, deadline));
  return states;
}

/**
 * A supervisor per node, all started before any is waited for; a node brought up again keeps the
 * node id and port its supervisor recorded.
 */
async function startNodeSupervisors(
  fleetBin: string,
  { lab, hosts }: LabUpPlan,
  children: Started[],
  deadline: number,
  progress: (line: string) => void,
): Promise<Map<string, LabSupervisorState>> {
  progress(
    hosts.length === 1
      ? 'starting 1 controller under a lab supervisor'
      : `starting ${hosts.length} controllers, each under a lab supervisor`,
  );
  const started = new Map<string, Started>();
  for (const host of hosts) {
    const node = nodeLayout(lab, host);
    const recorded = await readSupervisorState(node.state);
    const flags = recorded?.flags ?? { nodeId: host, port: 0 };
    const child = await spawnDetached(
      fleetBin,
      ['--dir', lab.dir, '--host', host, '--node-id', flags.nodeId, '--port', String(flags.port)],
      node.dir,
      node.log,
    );
    children.push(child);
    started.set(host, child);
  }
  const states = new Map<string, LabSupervisorState>();
  for (const host of hosts)
    states.set(host, await waitReady(lab, host, started.get(host) as Started, deadline));
  return states;
}

async function tail(path: string, lines = 8): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Starts `fleet lab supervise …` detached: its own process group, output to `log`, not our stdio. */
async function spawnDetached(
  fleetBin: string,
  args: readonly string[],
  cwd: string,
  log: string,
): Promise<Started> {
  const handle = await open(log, 'a', 0o600);
  try {
    const child = spawn(process.execPath, [fleetBin, 'lab', 'supervise', ...args], {
      cwd,
      detached: true,
      stdio: ['ignore', handle.fd, handle.fd],
    });
    const started: Started = { child, log, exited: undefined };
    child.once('exit', (code, signal) => (started.exited = signal ?? `code ${code}`));
    child.once('error', (error) => (started.exited = error.message));
    child.unref();
    return started;
  } finally {
    await handle.close();
  }
}

/** Waits until the node's supervisor (`started`) reports its controller running. */
async function waitReady(
  lab: LabLayout,
  host: string,
  started: Started,
  deadline: number,
): Promise<LabSupervisorState> {
  const node = nodeLayout(lab, host);
  const { log } = started;
  for (;;) {
    const state = await readSupervisorState(node.state);
    if (state && state.supervisorPid === started.child.pid) {
      if (state.state === 'running' && state.pid !== null) return state;
      if (state.state === 'failed') {
        throw new core.FleetError(
          'ACTION_FAILED',
          `${host}: the controller did not start: ${state.error ?? 'failed'}\n${await tail(log)}`,
        );
      }
    }
    if (started.exited !== undefined) {
      throw new core.FleetError(
        'ACTION_FAILED',
        `${host}: the lab supervisor exited (${started.exited})\n${await tail(log)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new core.FleetError(
        'ACTION_FAILED',
        `${host}: the controller was not up in time\n${await tail(log)}`,
      );
    }
    await sleep(50);
  }
}

/** Stops what this run started, reading the pids the supervisors recorded. */
async function rollBack(lab: LabLayout, children: readonly Started[]): Promise<void> {
  const items: LabProcess[] = [...(await recordedProcesses(lab))];
  for (const { child } of children) {
    if (child.pid !== undefined && !items.some((item) => item.pid === child.pid)) {
      items.push({ pid: child.pid, role: 'supervisor', host: null, path: lab.dir });
    }
  }
  await stopLabProcesses(items);
}
