/**
 * The virtual lab (`fleet lab up --virtual`, contract §13): every node's controller in ONE process —
 * one `createController` per node, each with its own home, token store, audit log and port — so
 * 1,000 nodes fit on one small machine for scale runs. Each node keeps the same API as a real lab
 * node: its own URL, its own `supervisor.json` (whose pids are all this process) and its own
 * control socket, where a restart closes that node's controller and starts it again with the new
 * flags on the same port.
 *
 * What it cannot give a node: a process of its own. `FLEET_LAB_SUPERVISOR` is one environment for
 * every node here, so it is not set; a domain that restarts its controller through the supervisor
 * needs a real lab node.
 */
import { FleetError, forEachHost, type Registry } from '@fleet/core';
import type { LabSupervisorState } from './supervisor-protocol.js';
import { createController, type Controller } from '@fleet/controller';
import { closeControl, serveControl } from './control-server.js';
import { labLayout, nodeLayout, type LabLayout } from './layout.js';
import { readSupervisorState, writeSupervisorState } from './state.js';

export interface VirtualOptions {
  readonly dir: string;
  readonly hosts: readonly string[];
  readonly registry: Registry;
  /** Nodes started at once. */
  readonly concurrency?: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface VirtualNode {
  readonly host: string;
  readonly state: Mutable<LabSupervisorState>;
  controller: Controller | undefined;
  close?: () => Promise<void>;
  queue: Promise<unknown>;
}

function log(message: string): void {
  process.stderr.write(`[${new Date().toISOString()}] virtual lab: ${message}\n`);
}

export async function runVirtual(options: VirtualOptions): Promise<void> {
  const lab = new VirtualLab(labLayout(options.dir), options.registry);
  const outcomes = await forEachHost(options.hosts, (host) => lab.add(host), {
    concurrency: options.concurrency ?? 16,
  });
  const failed = outcomes.filter((outcome) => !outcome.ok);
  if (failed.length > 0) {
    for (const outcome of failed) if (!outcome.ok) log(`${outcome.host}: ${outcome.error.message}`);
    await lab.shutdown(`${failed.length} node(s) failed to start`, 1);
    return;
  }
  log(`${lab.size} nodes running in pid ${process.pid}`);
  process.on('SIGTERM', () => void lab.shutdown('SIGTERM', 0));
  process.on('SIGINT', () => void lab.shutdown('SIGINT', 0));
  process.on('SIGHUP', () => undefined);
}

/**
 * The nodes of one virtual lab. A node's restarts and stops run one at a time, in the order its
 * control socket received them (`enqueue`); none is taken once the lab is stopping.
 */
class VirtualLab {
  private readonly nodes = new Map<string, VirtualNode>();
  private stopping = false;

  constructor(
    private readonly lab: LabLayout,
    private readonly registry: Registry,
  ) {}

  get size(): number {
    return this.nodes.size;
  }

  /** Starts `host`'s node (with the flags its state recorded) and serves its control socket. */
  async add(host: string): Promise<void> {
    const layout = nodeLayout(this.lab, host);
    const recorded = await readSupervisorState(layout.state);
    const node: VirtualNode = {
      host,
      controller: undefined,
      queue: Promise.resolve(),
      state: {
        host,
        flags: recorded?.flags ?? { nodeId: host, port: 0 },
        pid: null,
        startedAt: null,
        supervisorPid: process.pid,
        state: 'starting',
        restarts: recorded?.restarts ?? 0,
        home: layout.home,
        virtual: true,
      },
    };
    this.nodes.set(host, node);
    await this.startNode(node);
    const server = await serveControl(layout.socket, (request) =>
      'status' in request
        ? Promise.resolve({ ...node.state })
        : 'stop' in request
          ? this.stop(node)
          : this.restart(node, request.restart.nodeId),
    );
    node.close = () => closeControl(server, layout.socket);
  }

  /** Closes every node's controller and control socket, records them stopped, and exits. */
  async shutdown(why: string, code: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    log(`${why}: stopping ${this.nodes.size} nodes`);
    await forEachHost(
      [...this.nodes.keys()],
      async (host) => {
        const node = this.nodes.get(host) as VirtualNode;
        await node.queue;
        await node.close?.();
        await node.controller?.close();
        node.state.pid = null;
        node.state.state = 'stopped';
        await this.persist(node);
      },
      { concurrency: 32 },
    );
    log('stopped');
    process.exit(code);
  }

  private persist(node: VirtualNode): Promise<void> {
    return writeSupervisorState(nodeLayout(this.lab, node.host).state, { ...node.state });
  }

  private async startNode(node: VirtualNode): Promise<void> {
    const layout = nodeLayout(this.lab, node.host);
    // Same port every time; a just-closed listener can take a moment to release it.
    for (let attempt = 1; ; attempt += 1) {
      try {
        node.controller = await createController({
          home: layout.home,
          nodeId: node.state.flags.nodeId,
          registry: this.registry,
          bind: '127.0.0.1',
          port: node.state.flags.port,
        });
        break;
      } catch (error) {
        if (attempt >= 3 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    node.state.flags = { ...node.state.flags, port: node.controller.port };
    node.state.pid = process.pid;
    node.state.startedAt = new Date().toISOString();
    node.state.state = 'running';
    delete node.state.error;
    await this.persist(node);
  }

  private restart(node: VirtualNode, nodeId: string | undefined): Promise<LabSupervisorState> {
    return this.enqueue(node, async () => {
      log(`${node.host}: restart${nodeId ? ` with --node-id ${nodeId}` : ''}`);
      node.state.state = 'restarting';
      await this.persist(node);
      await node.controller?.close();
      node.controller = undefined;
      if (nodeId !== undefined) node.state.flags = { ...node.state.flags, nodeId };
      node.state.restarts += 1;
      try {
        await this.startNode(node);
      } catch (error) {
        node.state.pid = null;
        node.state.state = 'failed';
        node.state.error = error instanceof Error ? error.message : String(error);
        await this.persist(node);
        throw error;
      }
      return { ...node.state };
    });
  }

  /** Closes the node's controller and keeps it closed (state `stopped`) until a restart. */
  private stop(node: VirtualNode): Promise<LabSupervisorState> {
    return this.enqueue(node, async () => {
      log(`${node.host}: stop`);
      await node.controller?.close();
      node.controller = undefined;
      node.state.pid = null;
      node.state.state = 'stopped';
      delete node.state.error;
      await this.persist(node);
      return { ...node.state };
    });
  }

  /** Runs `action` after the node's queued work, whether that failed or not; refused when stopping. */
  private enqueue(
    node: VirtualNode,
    action: () => Promise<LabSupervisorState>,
  ): Promise<LabSupervisorState> {
    const work = async (): Promise<LabSupervisorState> => {
      if (this.stopping) {
        throw new FleetError('ACTION_FAILED', 'the virtual lab is stopping');
      }
      return action();
    };
    const next = node.queue.then(work, work);
    node.queue = next.catch(() => undefined);
    return next;
  }
}
