/**
 * The lab supervisor (contract §13): one small process per lab node that runs the node's controller
 * (`fleet controller serve`) as a child and restarts it — on request with new flags, or after a
 * crash — on the same fixed port. It is the lab's stand-in for a systemd user unit, so what the
 * transport-identity domain does to a real node (change the recorded `--node-id`, restart,
 * verify) it can do in the lab through this process's control socket.
 *
 * What it runs: the dev checkout's `fleet controller serve`, or — when the node's home holds a
 * definition, `~/.config/fleet/lab-controller.json` (written by the lab bootstrap adapter for a
 * runtime generation) — that definition's argv, read afresh at every (re)start. A definition that
 * does not parse, or says another port or home than the lab's, is refused (state `failed`).
 *
 * Its record, `supervisor.json`, is rewritten atomically at every change; `lab up` waits on it
 * and `lab down` reads the pids to stop from it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONTROLLER_NODE_OPTIONS,
  type LabSupervisorFlags,
  type LabSupervisorState,
} from '@fleet/core';
import { closeControl, serveControl } from './control-server.js';
import {
  LAB_CONTROLLER_DEFINITION_PATH,
  labDefinitionProblem,
  parseLabControllerDefinition,
  renderLabControllerDefinition,
  withJsonFlag,
} from './definition.js';
import { labLayout, nodeLayout } from './layout.js';
import { readSupervisorState, writeSupervisorState } from './state.js';

export interface SupervisorOptions {
  /** The lab's real DIR. */
  readonly dir: string;
  readonly host: string;
  /** Flags for a first start; a recorded supervisor.json (a lab brought up again) wins. */
  readonly flags: LabSupervisorFlags;
  /** The `fleet` entry point the controller is started with (this process's own). */
  readonly fleetBin: string;
  readonly readyTimeoutMs?: number;
}

const STOP_GRACE_MS = 10_000;
const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES = 5;

function log(message: string): void {
  process.stderr.write(`[${new Date().toISOString()}] supervisor: ${message}\n`);
}

/** What one start spawns. */
interface Launch {
  /** The node binary. */
  readonly executable: string;
  readonly args: readonly string[];
  /** Extra environment (the definition's). */
  readonly environment: Readonly<Record<string, string>>;
  /** Where the command came from, for the log. */
  readonly source: string;
  /** The `--node-id` it runs with. */
  readonly nodeId: string;
}

export async function runSupervisor(options: SupervisorOptions): Promise<void> {
  const {
    FleetError,
    LAB_SUPERVISOR_ENV,
    describeRuntimeCommand,
    readDefinitionFile,
    withNodeId,
    writeDefinitionFile,
  } = await import('@fleet/core');
  const node = nodeLayout(labLayout(options.dir), options.host);
  const recorded = await readSupervisorState(node.state);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const state: { -readonly [K in keyof LabSupervisorState]: LabSupervisorState[K] } = {
    host: options.host,
    flags: recorded?.flags ?? options.flags,
    pid: null,
    startedAt: null,
    supervisorPid: process.pid,
    state: 'starting',
    restarts: recorded?.restarts ?? 0,
    home: node.home,
    virtual: false,
  };
  let child: ChildProcess | undefined;
  /** A controller started but not yet accepting requests (a stop must not orphan it). */
  let spawning: ChildProcess | undefined;
  let stopping = false;
  let restarting = false;
  /** Stopped on request: stays stopped (no crash restart) until a restart request. */
  let held = false;
  const crashes: number[] = [];
  const persist = () => writeSupervisorState(node.state, { ...state });

  /**
   * What the next start runs, read afresh: the definition when the home holds one (checked
   * against this node's fixed port and home), else the dev checkout's controller.
   */
  const launch = async (): Promise<Launch> => {
    const content = await readDefinitionFile(node.home, LAB_CONTROLLER_DEFINITION_PATH);
    if (content === null) {
      return {
        executable: process.execPath,
        args: [
          ...CONTROLLER_NODE_OPTIONS,
          options.fleetBin,
          'controller',
          'serve',
          '--home',
          node.home,
          '--node-id',
          state.flags.nodeId,
          '--port',
          String(state.flags.port),
          '--json',
        ],
        environment: {},
        source: 'the dev checkout',
        nodeId: state.flags.nodeId,
      };
    }
    const definition = parseLabControllerDefinition(content);
    const problem = labDefinitionProblem(definition, { home: node.home, port: state.flags.port });
    if (problem !== null)
      throw new FleetError('ACTION_FAILED', `${LAB_CONTROLLER_DEFINITION_PATH}: ${problem}`);
    const [executable, ...args] = withJsonFlag(definition.command);
    return {
      executable: executable as string,
      args,
      environment: definition.environment,
      source: LAB_CONTROLLER_DEFINITION_PATH,
      nodeId: describeRuntimeCommand(definition.command).nodeId as string,
    };
  };

  /** A restart with a new `--node-id` records it in the definition too, so the two agree. */
  const recordNodeId = async (nodeId: string): Promise<void> => {
    const content = await readDefinitionFile(node.home, LAB_CONTROLLER_DEFINITION_PATH);
    if (content !== null) {
      const definition = parseLabControllerDefinition(content);
      await writeDefinitionFile(
        node.home,
        renderLabControllerDefinition({
          ...definition,
          command: withNodeId(definition.command, nodeId),
        }),
      );
      log(`recorded --node-id ${nodeId} in ${LAB_CONTROLLER_DEFINITION_PATH}`);
    }
    state.flags = { ...state.flags, nodeId };
  };

  /** Records a start that failed (and why) in `supervisor.json`. */
  const failed = async (error: unknown): Promise<void> => {
    state.pid = null;
    state.state = 'failed';
    state.error = error instanceof Error ? error.message : String(error);
    log(`failed: ${state.error}`);
    await persist();
  };

  /** Starts the controller; resolves once it printed its bound URL (it then accepts requests). */
  const spawnController = (what: Launch): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      log(`starting controller (${what.source}): ${what.executable} ${what.args.join(' ')}`);
      const proc = spawn(what.executable, [...what.args], {
        cwd: node.dir,
        env: { ...process.env, ...what.environment, [LAB_SUPERVISOR_ENV]: node.socket },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      spawning = proc;
      const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(
          new FleetError(
            'ACTION_FAILED',
            `the controller did not accept requests within ${readyTimeoutMs} ms`,
          ),
        );
      }, readyTimeoutMs);
      let ready = false;
      lines.on('line', (line) => {
        if (ready) {
          log(`controller: ${line}`);
          return;
        }
        try {
          const started = JSON.parse(line) as { url?: unknown };
          const port = Number(new URL(String(started.url)).port);
          if (!Number.isInteger(port) || port <= 0) throw new Error('no port');
          ready = true;
          spawning = undefined;
          clearTimeout(timer);
          state.flags = { ...state.flags, port };
          resolve(proc);
        } catch {
          log(`controller: ${line}`);
        }
      });
      proc.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      proc.once('exit', (code, signal) => {
        if (ready) return;
        if (spawning === proc) spawning = undefined;
        clearTimeout(timer);
        reject(
          new FleetError(
            'ACTION_FAILED',
            `the controller exited (${signal ?? `code ${code}`}) before accepting requests; see ${node.log}`,
          ),
        );
      });
    });

  const stopChild = async (): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const killed = await Promise.race([
      exited.then(() => false),
      sleep(STOP_GRACE_MS).then(() => true),
    ]);
    if (killed) {
      log(`controller ${proc.pid} ignored SIGTERM for ${STOP_GRACE_MS} ms: SIGKILL`);
      proc.kill('SIGKILL');
      await exited;
    }
  };

  const start = async (attempts: number): Promise<void> => {
    let what: Launch;
    try {
      what = await launch();
    } catch (error) {
      // A bad definition is refused, never retried or guessed around.
      if (!held) await failed(error);
      throw error;
    }
    for (let attempt = 1; ; attempt += 1) {
      try {
        const proc = await spawnController(what);
        child = proc;
        state.flags = { ...state.flags, nodeId: what.nodeId };
        state.pid = proc.pid ?? null;
        state.startedAt = new Date().toISOString();
        state.state = 'running';
        delete state.error;
        await persist();
        log(`controller ${proc.pid} runs as ${state.flags.nodeId} on port ${state.flags.port}`);
        proc.once('exit', (code, signal) => void onExit(proc, code, signal));
        return;
      } catch (error) {
        // A restart can race the old process for its port; a short wait settles it.
        if (attempt >= attempts || stopping || held) {
          // Stopped on request meanwhile: the stop records the state, not this start.
          if (!held) await failed(error);
          throw error;
        }
        await sleep(500);
      }
    }
  };

  const onExit = async (
    proc: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<void> => {
    if (stopping || restarting || held || proc !== child) return;
    log(`controller ${proc.pid} exited unexpectedly (${signal ?? `code ${code}`})`);
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && (crashes[0] as number) < now - CRASH_WINDOW_MS) crashes.shift();
    state.pid = null;
    if (crashes.length > MAX_CRASHES) {
      state.state = 'failed';
      state.error = `crashed ${crashes.length} times within ${CRASH_WINDOW_MS / 1000} s; not restarted`;
      await persist();
      log(state.error);
      return;
    }
    state.state = 'restarting';
    state.restarts += 1;
    await persist();
    await sleep(500 * crashes.length);
    if (!stopping && !restarting && !held)
      await start(3).catch((error: Error) => log(`restart failed: ${error.message}`));
  };

  // Requests are served one at a time: two restarts never interleave.
  let queue: Promise<unknown> = Promise.resolve();
  const serialised = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  const control = await serveControl(node.socket, (request) =>
    serialised(async () => {
      if ('status' in request) return { ...state };
      if (stopping) throw new FleetError('ACTION_FAILED', 'the supervisor is stopping');
      restarting = true;
      try {
        if ('stop' in request) {
          log('stop requested');
          held = true;
          // A crash restart in flight is not waited for: its controller is killed outright.
          spawning?.kill('SIGKILL');
          await stopChild();
          child = undefined;
          state.pid = null;
          state.state = 'stopped';
          delete state.error;
          await persist();
          return { ...state };
        }
        const { nodeId } = request.restart;
        log(`restart requested${nodeId ? ` with --node-id ${nodeId}` : ''}`);
        held = false;
        state.state = 'restarting';
        await persist();
        await stopChild();
        state.restarts += 1;
        if (nodeId !== undefined) {
          try {
            await recordNodeId(nodeId);
          } catch (error) {
            await failed(error);
            throw error;
          }
        }
        await start(3);
        return { ...state };
      } finally {
        restarting = false;
      }
    }),
  );

  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    // Not waiting for a restart in flight: a controller still starting is killed outright.
    spawning?.kill('SIGKILL');
    await stopChild();
    await closeControl(control, node.socket);
    state.pid = null;
    state.state = 'stopped';
    await persist();
    log('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGHUP', () => undefined); // detached: a closing terminal is not a reason to stop

  await persist();
  await start(1).catch((error: Error) => log(`start failed: ${error.message}`));
  // Lives until signalled: the control server keeps the event loop alive.
}
