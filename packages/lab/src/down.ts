/**
 * `fleet lab down` (contract §13): stops exactly the processes the lab started — the pids recorded in
 * each node's supervisor.json and in lab.json — each only after its command line shows it is still
 * this lab's (a recycled pid is never signalled). Supervisors get SIGTERM first and stop their
 * controllers cleanly; anything left gets SIGTERM, then SIGKILL after a bound. A lab of real units
 * (`--supervisor systemd-user`) has its units stopped, disabled and removed through the
 * bootstrap-systemd adapter — each node's recorded unit, nothing else. Idempotent: a lab already
 * down (or a DIR with no lab) is a no-op. The lab's files stay, so `lab up` brings it back.
 */
import { readdir, realpath, unlink } from 'node:fs/promises';
import { labLayout, nodeLayout } from './layout.js';
import { isOurs, stopLabProcesses, type StopOutcome } from './processes.js';
import { recordedProcesses } from './recorded.js';
import { readSupervisorState, writeSupervisorState } from './state.js';
import { removeSystemdNodes, type AdapterSource } from './systemd.js';

export interface LabDownResult {
  readonly dir: string;
  readonly processes: readonly {
    readonly pid: number;
    readonly role: 'supervisor' | 'controller';
    readonly host: string | null;
    readonly outcome: StopOutcome;
  }[];
  /** The units of a lab of real units, stopped and removed (their controller's last pid). */
  readonly units: readonly {
    readonly host: string;
    readonly unit: string;
    readonly pid: number | null;
  }[];
}

export async function labDown(options: {
  dir: string;
  graceMs?: number;
  /** Where the units of a lab of real units are removed through (the registry's adapter). */
  systemdAdapter?: AdapterSource;
}): Promise<LabDownResult> {
  let dir: string;
  try {
    dir = await realpath(options.dir);
  } catch {
    return { dir: options.dir, processes: [], units: [] }; // no DIR, no lab: nothing to stop
  }
  const lab = labLayout(dir);
  const nodes = (await readdir(lab.nodes, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ host: entry.name, home: nodeLayout(lab, entry.name).home }));
  const units = await removeSystemdNodes(nodes, async () => {
    if (options.systemdAdapter === undefined)
      throw new Error('this lab runs real units: lab down needs the systemd-user adapter');
    return options.systemdAdapter();
  });
  const items = await recordedProcesses(lab);
  const outcomes = await stopLabProcesses(
    items,
    options.graceMs === undefined ? {} : { graceMs: options.graceMs },
  );

  // A supervisor that had to be killed could not record that it stopped, nor remove its socket.
  const hosts = await readdir(lab.nodes, { withFileTypes: true }).catch(() => []);
  for (const entry of hosts) {
    if (!entry.isDirectory()) continue;
    const node = nodeLayout(lab, entry.name);
    const state = await readSupervisorState(node.state);
    if (!state || state.state === 'stopped') continue;
    const supervisor = {
      pid: state.supervisorPid,
      role: 'supervisor' as const,
      host: null,
      path: lab.dir,
    };
    if (isOurs(supervisor)) continue; // survived even SIGKILL (reported as such): leave its record
    await writeSupervisorState(node.state, { ...state, pid: null, state: 'stopped' });
    await unlink(node.socket).catch(() => undefined);
  }
  return {
    dir,
    units,
    processes: items.map((item) => ({
      pid: item.pid,
      role: item.role,
      host: item.host,
      outcome: outcomes.get(item) ?? 'not-running',
    })),
  };
}
