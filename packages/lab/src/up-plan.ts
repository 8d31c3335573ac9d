/**
 * What `fleet lab up` brings up (up.ts), settled before anything is written: the DIR holds no
 * running lab and nothing else; a stopped lab comes up as it was (its hosts, its supervisor); and
 * `--hosts`, `--supervisor`, `--virtual` and `--node-actions` agree with each other and with it.
 */
import { mkdir, readdir, realpath } from 'node:fs/promises';
import { FleetError, readSupervisorRecord, type LabDocument, type Registry } from '@fleet/core';
import {
  DEFAULT_HOSTS,
  MAX_REAL_HOSTS,
  MAX_VIRTUAL_HOSTS,
  hostNames,
  labLayout,
  nodeLayout,
  type LabLayout,
} from './layout.js';
import type { LabDevPlugin } from './dev-plugins.js';
import { LAB_DOMAINS } from './policy.js';
import { runningProcesses } from './recorded.js';
import {
  readNodeActionsFile,
  refuseNodeActionsOnStoppedLab,
  type LabNodeActions,
} from './node-actions.js';
import { readLabDocument } from './state.js';
import { runningSystemdNodes } from './systemd.js';
import type { LabSupervisorKind, LabUpOptions } from './up-options.js';

export interface LabUpPlan {
  readonly lab: LabLayout;
  /** A stopped lab's `lab.json`; undefined for a new lab. */
  readonly previous: LabDocument | undefined;
  readonly hosts: readonly string[];
  /** Each host's node home. */
  readonly homes: ReadonlyMap<string, string>;
  readonly supervisor: LabSupervisorKind;
  /** The linked plugins its nodes serve from their folders (the lab supervisor only). */
  readonly devPlugins: readonly LabDevPlugin[];
  readonly nodeActions: LabNodeActions;
}

export async function planLabUp(options: LabUpOptions): Promise<LabUpPlan> {
  await mkdir(options.dir, { recursive: true });
  // Real path: pids are later matched against the DIR in their command lines.
  const lab = labLayout(await realpath(options.dir));
  await refuseRunningLab(lab, options.registry);
  const previous = await readLabDocument(lab.labFile);
  if (!previous) await refuseForeignDir(lab);
  const hosts = labHosts(lab, previous, options);
  const supervisor = await labSupervisor(lab, hosts, previous, options);
  // Under the lab supervisor, the operator's linked plugins (dev-plugins.ts); a lab brought up
  // again takes the plugins linked now. --node-actions is checked before anything is written.
  const devPlugins = supervisor === 'lab' ? (options.devPlugins ?? []) : [];
  const nodeActions = await labNodeActions(options.nodeActionsFile, previous, devPlugins);
  const homes = new Map(hosts.map((host) => [host, nodeLayout(lab, host).home]));
  return { lab, previous, hosts, homes, supervisor, devPlugins, nodeActions };
}

/** A lab whose supervisors, controllers or units still run is refused: `lab down` first. */
async function refuseRunningLab(lab: LabLayout, registry: Registry): Promise<void> {
  const running = await runningProcesses(lab);
  const recordedNodes = (await readdir(lab.nodes, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ host: entry.name, home: nodeLayout(lab, entry.name).home }));
  const runningUnits = await runningSystemdNodes(recordedNodes, () =>
    registry.bootstrapAdapter('systemd-user'),
  );
  if (runningUnits.length > 0) {
    throw new FleetError(
      'LOCKED',
      `${lab.dir} holds a running lab (units ${runningUnits.map((u) => u.unit).join(', ')})`,
      { suggestions: [`stop it first: fleet lab down --dir ${lab.dir}`] },
    );
  }
  if (running.length > 0) {
    throw new FleetError(
      'LOCKED',
      `${lab.dir} holds a running lab (pids ${running.map((p) => p.pid).join(', ')})`,
      {
        suggestions: [`stop it first: fleet lab down --dir ${lab.dir}`],
      },
    );
  }
}

/** A new lab is built only in a new or empty DIR. */
async function refuseForeignDir(lab: LabLayout): Promise<void> {
  if ((await readdir(lab.dir)).length > 0) {
    throw new FleetError(
      'INIT_TARGET_NOT_EMPTY',
      `${lab.dir} is not empty and holds no lab: fleet lab up builds a lab only in a new or empty directory`,
      {
        suggestions: [
          'choose another --dir; a lab that failed half-way: fleet lab down --dir DIR, then remove DIR',
        ],
      },
    );
  }
}

/** The hosts: a stopped lab's own (`--hosts` may only repeat their count), else `--hosts` new. */
function labHosts(
  lab: LabLayout,
  previous: LabDocument | undefined,
  options: LabUpOptions,
): readonly string[] {
  const count = options.hosts ?? previous?.hosts.length ?? DEFAULT_HOSTS;
  if (previous && count !== previous.hosts.length) {
    throw new FleetError(
      'USAGE',
      `${lab.dir} holds a stopped lab of ${previous.hosts.length} hosts, not ${count}`,
      {
        suggestions: ['bring it up as it is (omit --hosts), or use another --dir'],
      },
    );
  }
  const max = options.virtual ? MAX_VIRTUAL_HOSTS : MAX_REAL_HOSTS;
  if (!Number.isInteger(count) || count < 1 || count > max) {
    throw new FleetError(
      'USAGE',
      `--hosts must be 1 to ${max}${options.virtual ? '' : ' (more with --virtual)'}`,
    );
  }
  return previous ? previous.hosts.map((host) => host.name) : hostNames(count);
}

/** What runs the controllers: `--supervisor`, else what a stopped lab's nodes record, else lab. */
async function labSupervisor(
  lab: LabLayout,
  hosts: readonly string[],
  previous: LabDocument | undefined,
  options: LabUpOptions,
): Promise<LabSupervisorKind> {
  const recordedKind = await recordedSupervisorKind(
    hosts.map((host) => nodeLayout(lab, host).home),
  );
  const supervisor: LabSupervisorKind = options.supervisor ?? recordedKind ?? 'lab';
  if (previous && recordedKind !== undefined && supervisor !== recordedKind) {
    throw new FleetError(
      'USAGE',
      `${lab.dir} holds a stopped lab whose controllers run under ${recordedKind}, not ${supervisor}`,
      { suggestions: ['bring it up as it is (omit --supervisor), or use another --dir'] },
    );
  }
  if (supervisor === 'systemd-user' && options.virtual) {
    throw new FleetError(
      'USAGE',
      '--virtual runs every controller in one process: it cannot be a unit per host (--supervisor systemd-user)',
    );
  }
  return supervisor;
}

/** The supervisor a stopped lab's nodes record (the first one that records one). */
async function recordedSupervisorKind(
  homes: readonly string[],
): Promise<LabSupervisorKind | undefined> {
  for (const home of homes) {
    const record = await readSupervisorRecord(home).catch(() => null);
    if (record?.supervisor === 'lab' || record?.supervisor === 'systemd-user')
      return record.supervisor;
  }
  return undefined;
}

/**
 * The node actions of `--node-actions FILE` (node-actions.ts), checked against what the lab's
 * nodes serve; none without the flag. A stopped lab's policies are already written: refused.
 */
async function labNodeActions(
  file: string | undefined,
  previous: LabDocument | undefined,
  devPlugins: readonly LabDevPlugin[],
): Promise<LabNodeActions> {
  if (file === undefined) return {};
  if (previous) refuseNodeActionsOnStoppedLab();
  const served = [...LAB_DOMAINS, ...devPlugins.flatMap((plugin) => plugin.domains)];
  return readNodeActionsFile(file, served);
}
