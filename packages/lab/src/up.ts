/**
 * `fleet lab up` (contract §13): node homes, tokens issued into each node's store, one detached
 * supervisor per node (or one virtual process for all), the fleet repository with every node's
 * real controller URL, and — only once every controller answered `/v1/identity` with its node id
 * through the operator's own client — `lab.json`. If anything fails after a process started,
 * every process started is stopped again: a failed `lab up` leaves nothing running.
 *
 * A DIR holding a stopped lab is brought up again as it was: same hosts, ports, tokens and repo.
 *
 * `--supervisor systemd-user` runs each controller as a real unit of the calling user's
 * `systemd --user` manager instead (systemd.ts); every node records which supervisor runs it
 * (`supervisor.json`), so its coupled restarts and `lab down` drive the right one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readdir, readFile, realpath } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LabDocument, LabSupervisorState, Registry } from '@fleet/core';
import {
  DEFAULT_HOSTS,
  MAX_REAL_HOSTS,
  MAX_VIRTUAL_HOSTS,
  hostNames,
  labLayout,
  nodeLayout,
  type LabLayout,
} from './layout.js';
import { LAB_CONTROLLER_DEFINITION_PATH } from './definition.js';
import { syncLabDevPlugins, type LabDevPlugin } from './dev-plugins.js';
import { LAB_DOMAINS, writeLabNodePolicy } from './policy.js';
import { stopLabProcesses, type LabProcess } from './processes.js';
import { recordedProcesses, runningProcesses } from './recorded.js';
import {
  readNodeActionsFile,
  refuseNodeActionsOnStoppedLab,
  type LabNodeActions,
} from './node-actions.js';
import { buildLabRepo } from './repo.js';
import { readLabDocument, readSupervisorState, writeJsonAtomic } from './state.js';
import {
  labUnitName,
  runningSystemdNodes,
  startSystemdNodes,
  removeSystemdNodes,
} from './systemd.js';
import { issueLabTokens, writeCredentials } from './tokens.js';

/** What runs a lab's controllers. */
export type LabSupervisorKind = 'lab' | 'systemd-user';

export interface LabUpOptions {
  readonly dir: string;
  /** Undefined: the default for a new lab, the recorded count for a stopped one. */
  readonly hosts?: number | undefined;
  readonly virtual: boolean;
  /** Undefined: the lab supervisor for a new lab, what a stopped lab's nodes record for it. */
  readonly supervisor?: LabSupervisorKind | undefined;
  /** The `fleet` entry point supervisors and controllers run (this CLI's own). */
  readonly fleetBin: string;
  readonly registry: Registry;
  /**
   * The plugins linked into the operator's CLI (dev-plugins.ts): under the lab supervisor its nodes
   * load them from their folders and serve their domains.
   */
  readonly devPlugins?: readonly LabDevPlugin[];
  /**
   * `--node-actions FILE`: the node policy actions a new lab's nodes define and the roles its
   * fleet.yaml names (node-actions.ts). Refused for a stopped lab: its policies are written.
   */
  readonly nodeActionsFile?: string | undefined;
  readonly readyTimeoutMs?: number;
  readonly progress?: (line: string) => void;
}

interface Started {
  readonly child: ChildProcess;
  /** Where its output goes (quoted when it fails). */
  readonly log: string;
  exited: string | undefined;
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

/** Waits until the node's supervisor (pid `supervisorPid`) reports its controller running. */
async function waitReady(
  lab: LabLayout,
  host: string,
  started: Started,
  deadline: number,
): Promise<LabSupervisorState> {
  const { FleetError } = await import('@fleet/core');
  const node = nodeLayout(lab, host);
  const { log } = started;
  for (;;) {
    const state = await readSupervisorState(node.state);
    if (state && state.supervisorPid === started.child.pid) {
      if (state.state === 'running' && state.pid !== null) return state;
      if (state.state === 'failed') {
        throw new FleetError(
          'ACTION_FAILED',
          `${host}: the controller did not start: ${state.error ?? 'failed'}\n${await tail(log)}`,
        );
      }
    }
    if (started.exited !== undefined) {
      throw new FleetError(
        'ACTION_FAILED',
        `${host}: the lab supervisor exited (${started.exited})\n${await tail(log)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new FleetError(
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

export async function labUp(options: LabUpOptions): Promise<LabDocument> {
  const core = await import('@fleet/core');
  const { FleetError } = core;
  const progress = options.progress ?? (() => undefined);
  await mkdir(options.dir, { recursive: true });
  // Real path: pids are later matched against the DIR in their command lines.
  const lab = labLayout(await realpath(options.dir));

  const running = await runningProcesses(lab);
  const recordedNodes = (await readdir(lab.nodes, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ host: entry.name, home: nodeLayout(lab, entry.name).home }));
  const runningUnits = await runningSystemdNodes(recordedNodes, () =>
    options.registry.bootstrapAdapter('systemd-user'),
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
  const previous = await readLabDocument(lab.labFile);
  if (!previous && (await readdir(lab.dir)).length > 0) {
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
  const hosts = previous ? previous.hosts.map((host) => host.name) : hostNames(count);
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
  // Under the lab supervisor, the operator's linked plugins (dev-plugins.ts); a lab brought up
  // again takes the plugins linked now. --node-actions is checked before anything is written.
  const devPlugins = supervisor === 'lab' ? (options.devPlugins ?? []) : [];
  const nodeActions = await labNodeActions(options.nodeActionsFile, previous, devPlugins);

  const homes = new Map(hosts.map((host) => [host, nodeLayout(lab, host).home]));
  let credentials;
  if (previous) {
    credentials = await core.loadCredentials(lab.credentials);
  } else {
    for (const home of homes.values()) await mkdir(home, { recursive: true });
    progress(`issuing a token into each node's store (${hosts.length})`);
    credentials = await issueLabTokens(homes);
    await writeCredentials(lab.credentials, credentials);
  }
  // The lab's release signing key (docs/releases.md): lab build signs with it, its nodes trust it,
  // so runtime changes on a lab take the real, signed path.
  const signing = await core.signingKey(core.defaultSigningKeyFile(lab.credentials), {
    create: true,
  });
  // Each node's own policy (contract §5.1): the three config domains and files, bootstrap through
  // the supervisor that runs it (a lab is a sandbox, contract §12), that supervisor, the coupled
  // actions of --node-actions only (read above, before anything was written).
  for (const host of hosts) {
    const node = nodeLayout(lab, host);
    await writeLabNodePolicy(
      node.home,
      supervisor === 'systemd-user'
        ? { kind: 'systemd-user', unit: labUnitName(lab.dir, host) }
        : { kind: 'lab', socket: node.socket },
      [signing.publicKey],
      devPlugins,
      nodeActions,
    );
    if (previous) await syncLabDevPlugins(node.home, devPlugins);
  }
  if (devPlugins.length > 0) {
    progress(
      `serving the linked plugins from their folders (lab only): ${devPlugins.map((p) => `${p.name} (${p.domains.join(', ')})`).join(', ')}`,
    );
  }

  if (supervisor === 'systemd-user') {
    const linked = new Set((options.devPlugins ?? []).flatMap((plugin) => plugin.domains));
    if (linked.size > 0) {
      progress(
        `not serving the linked plugins' domains ${[...linked].join(', ')}: a systemd-user lab runs real units, which load only what their runtime carries`,
      );
    }
    return labUpUnits(options, lab, hosts, homes, previous, credentials, signing.publicKey, {
      linked,
      nodeActions,
    });
  }
  // The node records what runs its controller (contract §12): the lab supervisor.
  for (const [host, home] of homes) {
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
    const states = new Map<string, LabSupervisorState>();
    if (options.virtual) {
      progress(
        `starting ${hosts.length} virtual node${hosts.length === 1 ? '' : 's'} in one process`,
      );
      const started = await spawnDetached(
        options.fleetBin,
        ['--dir', lab.dir, '--virtual', '--hosts', String(hosts.length)],
        lab.nodes,
        lab.virtualLog,
      );
      children.push(started);
      for (const host of hosts) states.set(host, await waitReady(lab, host, started, deadline));
    } else {
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
          options.fleetBin,
          [
            '--dir',
            lab.dir,
            '--host',
            host,
            '--node-id',
            flags.nodeId,
            '--port',
            String(flags.port),
          ],
          node.dir,
          node.log,
        );
        children.push(child);
        started.set(host, child);
      }
      for (const host of hosts)
        states.set(host, await waitReady(lab, host, started.get(host) as Started, deadline));
    }

    const controllerOf = (host: string) =>
      `http://127.0.0.1:${(states.get(host) as LabSupervisorState).flags.port}`;
    if (!previous) {
      progress('writing the fleet repository');
      await buildLabRepo({
        root: lab.repo,
        hosts: hosts.map((host) => ({
          name: host,
          controller: controllerOf(host),
          nodeId: (states.get(host) as LabSupervisorState).flags.nodeId,
        })),
        domains: options.registry.domains().map((entry) => entry.descriptor),
        signingKey: signing.publicKey,
        nodeActions,
      });
    }

    progress('checking every controller answers /v1/identity with its node id');
    await verifyIdentities(
      hosts,
      (host) => (states.get(host) as LabSupervisorState).flags.nodeId,
      controllerOf,
      credentials,
      deadline,
    );

    const document: LabDocument = {
      repo: lab.repo,
      credentials: lab.credentials,
      hosts: hosts.map((host) => ({
        name: host,
        home: homes.get(host) as string,
        controller: controllerOf(host),
        pid: (states.get(host) as LabSupervisorState).pid as number,
      })),
    };
    await writeJsonAtomic(lab.labFile, document);
    return document;
  } catch (error) {
    progress('lab up failed: stopping what it started');
    await rollBack(lab, children);
    throw error;
  }
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

/**
 * The lab of real units (systemd.ts): each controller installed through the bootstrap-systemd
 * adapter and started; the repository written with their ports; lab.json once each answered its
 * identity. A failure removes every unit this run installed.
 */
async function labUpUnits(
  options: LabUpOptions,
  lab: LabLayout,
  hosts: readonly string[],
  homes: ReadonlyMap<string, string>,
  previous: LabDocument | undefined,
  credentials: import('@fleet/core').Credentials,
  signingKey: string,
  served: {
    /** The linked plugins' domains, which units do not serve: left out of the repository. */
    readonly linked: ReadonlySet<string>;
    readonly nodeActions: LabNodeActions;
  },
): Promise<LabDocument> {
  const unserved = served.linked;
  const progress = options.progress ?? (() => undefined);
  const readyTimeout = options.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + readyTimeout;
  const recordedPort = (host: string): number => {
    const url = previous?.hosts.find((entry) => entry.name === host)?.controller;
    return url === undefined ? 0 : Number(new URL(url).port);
  };
  const homeOf = (host: string) => homes.get(host) as string;
  const systemdAdapter = () => options.registry.bootstrapAdapter('systemd-user');
  progress(
    `starting ${hosts.length} controller${hosts.length === 1 ? '' : 's'}, each a unit of the user's systemd --user manager`,
  );
  const nodes = await startSystemdNodes({
    labDir: lab.dir,
    fleetBin: options.fleetBin,
    hosts: hosts.map((host) => ({
      host,
      home: homeOf(host),
      nodeId: host,
      port: recordedPort(host),
    })),
    readyTimeoutMs: readyTimeout,
    progress,
    adapter: systemdAdapter,
  });
  const byHost = new Map(nodes.map((node) => [node.host, node]));
  const controllerOf = (host: string) =>
    `http://127.0.0.1:${(byHost.get(host) as (typeof nodes)[number]).port}`;
  try {
    if (!previous) {
      progress('writing the fleet repository');
      await buildLabRepo({
        root: lab.repo,
        hosts: hosts.map((host) => ({ name: host, controller: controllerOf(host), nodeId: host })),
        domains: options.registry
          .domains()
          .map((entry) => entry.descriptor)
          .filter((descriptor) => !unserved.has(descriptor.domain)),
        supervisor: 'systemd-user',
        signingKey,
        nodeActions: served.nodeActions,
      });
    }
    progress('checking every controller answers /v1/identity with its node id');
    await verifyIdentities(
      hosts,
      (host) => (byHost.get(host) as (typeof nodes)[number]).nodeId,
      controllerOf,
      credentials,
      deadline,
    );
    const document: LabDocument = {
      repo: lab.repo,
      credentials: lab.credentials,
      hosts: hosts.map((host) => ({
        name: host,
        home: homeOf(host),
        controller: controllerOf(host),
        pid: (byHost.get(host) as (typeof nodes)[number]).pid,
      })),
    };
    await writeJsonAtomic(lab.labFile, document);
    return document;
  } catch (error) {
    progress('lab up failed: removing the units it installed');
    await removeSystemdNodes(
      hosts.map((host) => ({ host, home: homeOf(host) })),
      systemdAdapter,
    ).catch(() => undefined);
    throw error;
  }
}

/** The supervisor a stopped lab's nodes record (the first one that records one). */
async function recordedSupervisorKind(
  homes: readonly string[],
): Promise<LabSupervisorKind | undefined> {
  const { readSupervisorRecord } = await import('@fleet/core');
  for (const home of homes) {
    const record = await readSupervisorRecord(home).catch(() => null);
    if (record?.supervisor === 'lab' || record?.supervisor === 'systemd-user')
      return record.supervisor;
  }
  return undefined;
}

/** Every controller answers `/v1/identity` with the node id it was started with. */
async function verifyIdentities(
  hosts: readonly string[],
  nodeIdOf: (host: string) => string,
  controllerOf: (host: string) => string,
  credentials: import('@fleet/core').Credentials,
  deadline: number,
): Promise<void> {
  const { FleetError, createControllerClient, forEachHost, tokenFor } = await import('@fleet/core');
  const outcomes = await forEachHost(
    hosts,
    async (host) => {
      const expected = nodeIdOf(host);
      const client = createControllerClient({
        host,
        url: controllerOf(host),
        token: tokenFor(credentials, host, 'credentials.json'),
        timeoutMs: 10_000,
      });
      for (;;) {
        try {
          const identity = await client.identity();
          if (identity.nodeId !== expected) {
            throw new FleetError(
              'VERIFICATION_FAILED',
              `${host}: identity reports node id ${identity.nodeId}, not ${expected}`,
            );
          }
          return identity;
        } catch (error) {
          // A controller that printed its URL already listens; retry only what could be a race.
          const code = (error as { code?: string }).code;
          if (code !== 'HOST_UNREACHABLE' || Date.now() > deadline) throw error;
          await sleep(100);
        }
      }
    },
    { concurrency: 32 },
  );
  const failed = outcomes.filter((outcome) => !outcome.ok);
  if (failed.length > 0) {
    const first = failed[0];
    throw new FleetError(
      'VERIFICATION_FAILED',
      `${failed.length} of ${hosts.length} controllers did not answer identity: ${first && !first.ok ? first.error.message : ''}`,
    );
  }
}
