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
import type { LabSupervisorState, Registry } from '@fleet/core';
import type { Controller } from '@fleet/controller';
import { closeControl, serveControl } from './control-server.js';
import { labLayout, nodeLayout } from './layout.js';
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
  const { FleetError, forEachHost } = await import('@fleet/core');
  const { createController } = await import('@fleet/controller');
  const lab = labLayout(options.dir);
  const nodes = new Map<string, VirtualNode>();
  let stopping = false;

  const persist = (node: VirtualNode) =>
    writeSupervisorState(nodeLayout(lab, node.host).state, { ...node.state });

  const startNode = async (node: VirtualNode): Promise<void> => {
    const layout = nodeLayout(lab, node.host);
    // Same port every time; a just-closed listener can take a moment to release it.
    for (let attempt = 1; ; attempt += 1) {
      try {
        node.controller = await createController({
          home: layout.home,
          nodeId: node.state.flags.nodeId,
          registry: options.registry,
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
    await persist(node);
  };

  const restart = (node: VirtualNode, nodeId: string | undefined): Promise<LabSupervisorState> => {
    const work = async (): Promise<LabSupervisorState> => {
      if (stopping) throw new FleetError('ACTION_FAILED', 'the virtual lab is stopping');
      log(`${node.host}: restart${nodeId ? ` with --node-id ${nodeId}` : ''}`);
      node.state.state = 'restarting';
      await persist(node);
      await node.controller?.close();
      node.controller = undefined;
      if (nodeId !== undefined) node.state.flags = { ...node.state.flags, nodeId };
      node.state.restarts += 1;
      try {
        await startNode(node);
      } catch (error) {
        node.state.pid = null;
        node.state.state = 'failed';
        node.state.error = error instanceof Error ? error.message : String(error);
        await persist(node);
        throw error;
      }
      return { ...node.state };
    };
    const next = node.queue.then(work, work);
    node.queue = next.catch(() => undefined);
    return next;
  };

  /** Closes the node's controller and keeps it closed (state `stopped`) until a restart. */
  const stop = (node: VirtualNode): Promise<LabSupervisorState> => {
    const work = async (): Promise<LabSupervisorState> => {
      if (stopping) throw new FleetError('ACTION_FAILED', 'the virtual lab is stopping');
      log(`${node.host}: stop`);
      await node.controller?.close();
      node.controller = undefined;
      node.state.pid = null;
      node.state.state = 'stopped';
      delete node.state.error;
      await persist(node);
      return { ...node.state };
    };
    const next = node.queue.then(work, work);
    node.queue = next.catch(() => undefined);
    return next;
  };

  const outcomes = await forEachHost(
    options.hosts,
    async (host) => {
      const layout = nodeLayout(lab, host);
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
      nodes.set(host, node);
      await startNode(node);
      const server = await serveControl(layout.socket, (request) =>
        'status' in request
          ? Promise.resolve({ ...node.state })
          : 'stop' in request
            ? stop(node)
            : restart(node, request.restart.nodeId),
      );
      node.close = () => closeControl(server, layout.socket);
    },
    { concurrency: options.concurrency ?? 16 },
  );

  const shutdown = async (why: string, code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(`${why}: stopping ${nodes.size} nodes`);
    await forEachHost(
      [...nodes.keys()],
      async (host) => {
        const node = nodes.get(host) as VirtualNode;
        await node.queue;
        await node.close?.();
        await node.controller?.close();
        node.state.pid = null;
        node.state.state = 'stopped';
        await persist(node);
      },
      { concurrency: 32 },
    );
    log('stopped');
    process.exit(code);
  };

  const failed = outcomes.filter((outcome) => !outcome.ok);
  if (failed.length > 0) {
    for (const outcome of failed) if (!outcome.ok) log(`${outcome.host}: ${outcome.error.message}`);
    await shutdown(`${failed.length} node(s) failed to start`, 1);
    return;
  }
  log(`${nodes.size} nodes running in pid ${process.pid}`);
  process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
  process.on('SIGINT', () => void shutdown('SIGINT', 0));
  process.on('SIGHUP', () => undefined);
}
