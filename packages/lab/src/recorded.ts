/**
 * Every process a lab recorded starting: each node's supervisor and controller from its
 * `supervisor.json`, and the controller pids `lab.json` was written with. `lab down` stops these
 * (and only these, after checking each command line); `lab up` refuses a DIR where one still runs.
 */
import { readdir } from 'node:fs/promises';
import type { LabLayout } from './layout.js';
import { nodeLayout } from './layout.js';
import { isOurs, type LabProcess } from './processes.js';
import { readLabDocument, readSupervisorState } from './state.js';

export async function recordedProcesses(lab: LabLayout): Promise<LabProcess[]> {
  const found: LabProcess[] = [];
  const seen = new Set<string>();
  const add = (item: LabProcess): void => {
    const key = `${item.role}:${item.pid}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push(item);
  };
  let hosts: string[] = [];
  try {
    hosts = (await readdir(lab.nodes, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    // No nodes directory: nothing was ever started here.
  }
  const supervisorPids = new Set<number>();
  for (const host of hosts) {
    const node = nodeLayout(lab, host);
    const state = await readSupervisorState(node.state);
    if (!state) continue;
    supervisorPids.add(state.supervisorPid);
    add({
      pid: state.supervisorPid,
      role: 'supervisor',
      host: state.virtual ? null : host,
      path: lab.dir,
    });
    // In the virtual lab every node's controller is the supervisor process itself.
    if (state.pid !== null && state.pid !== state.supervisorPid) {
      add({ pid: state.pid, role: 'controller', host, path: node.home });
    }
  }
  const document = await readLabDocument(lab.labFile).catch(() => undefined);
  for (const host of document?.hosts ?? []) {
    if (supervisorPids.has(host.pid)) continue;
    add({ pid: host.pid, role: 'controller', host: host.name, path: host.home });
  }
  return found;
}

/** The recorded processes that still run as this lab's. */
export async function runningProcesses(lab: LabLayout): Promise<LabProcess[]> {
  return (await recordedProcesses(lab)).filter(isOurs);
}
