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
import type { Server } from 'node:net';
import type {
  LabSupervisorFlags,
  LabSupervisorRequest,
  LabSupervisorState,
} from './supervisor-protocol.js';
import {
  FleetError,
  describeRuntimeCommand,
  readDefinitionFile,
  withNodeId,
  writeDefinitionFile,
} from '@fleet/core';
import { LAB_SUPERVISOR_ENV } from './supervisor-protocol.js';
import { closeControl, serveControl } from './control-server.js';
import {
  LAB_CONTROLLER_DEFINITION_PATH,
  labDefinitionProblem,
  parseLabControllerDefinition,
  renderLabControllerDefinition,
  withJsonFlag,
} from './definition.js';
import { labLayout, nodeLayout, type NodeLayout } from './layout.js';
import { readSupervisorState, writeSupervisorState } from './state.js';
import {
  CRASH_WINDOW_MS,
  devCheckoutLaunch,
  MAX_CRASHES,
  readyPort,
  recentCrashes,
  type Launch,
} from './supervisor-model.js';

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

function log(message: string): void {
  process.stderr.write(`[${new Date().toISOString()}] supervisor: ${message}\n`);
}

export async function runSupervisor(options: SupervisorOptions): Promise<void> {
  const node = nodeLayout(labLayout(options.dir), options.host);
  const recorded = await readSupervisorState(node.state);
  const supervisor = new Supervisor(options, node, recorded);
  const control = await serveControl(node.socket, (request) => supervisor.handle(request));
  const shutdown = (signal: string) => void supervisor.shutdown(signal, control);
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => undefined); // detached: a closing terminal is not a reason to stop

  await supervisor.persist();
  await supervisor.start(1).catch((error: Error) => log(`start failed: ${error.message}`));
  // Lives until signalled: the control server keeps the event loop alive.
}

type MutableState = { -readonly [K in keyof LabSupervisorState]: LabSupervisorState[K] };

/** One node's supervisor: its recorded state, its controller child and the requests it serves. */
class Supervisor {
  private readonly state: MutableState;
  private readonly readyTimeoutMs: number;
  private child: ChildProcess | undefined;
  /** A controller started but not yet accepting requests (a stop must not orphan it). */
  private spawning: ChildProcess | undefined;
  private stopping = false;
  private restarting = false;
  /** Stopped on request: stays stopped (no crash restart) until a restart request. */
  private held = false;
  private crashes: number[] = [];
  /** Requests are served one at a time: two restarts never interleave. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: SupervisorOptions,
    private readonly node: NodeLayout,
    recorded: LabSupervisorState | undefined,
  ) {
    this.readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    this.state = {
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
  }

  persist(): Promise<void> {
    return writeSupervisorState(this.node.state, { ...this.state });
  }

  /**
   * What the next start runs, read afresh: the definition when the home holds one (checked
   * against this node's fixed port and home), else the dev checkout's controller.
   */
  private async launch(): Promise<Launch> {
    const content = await readDefinitionFile(this.node.home, LAB_CONTROLLER_DEFINITION_PATH);
    if (content === null)
      return devCheckoutLaunch(this.options.fleetBin, this.node.home, this.state.flags);
    const definition = parseLabControllerDefinition(content);
    const problem = labDefinitionProblem(definition, {
      home: this.node.home,
      port: this.state.flags.port,
    });
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
  }

  /** A restart with a new `--node-id` records it in the definition too, so the two agree. */
  private async recordNodeId(nodeId: string): Promise<void> {
    const content = await readDefinitionFile(this.node.home, LAB_CONTROLLER_DEFINITION_PATH);
    if (content !== null) {
      const definition = parseLabControllerDefinition(content);
      await writeDefinitionFile(
        this.node.home,
        renderLabControllerDefinition({
          ...definition,
          command: withNodeId(definition.command, nodeId),
        }),
      );
      log(`recorded --node-id ${nodeId} in ${LAB_CONTROLLER_DEFINITION_PATH}`);
    }
    this.state.flags = { ...this.state.flags, nodeId };
  }

  /** Records a start that failed (and why) in `supervisor.json`. */
  private async failed(error: unknown): Promise<void> {
    this.state.pid = null;
    this.state.state = 'failed';
    this.state.error = error instanceof Error ? error.message : String(error);
    log(`failed: ${this.state.error}`);
    await this.persist();
  }

  /** Starts the controller; resolves once it printed its bound URL (it then accepts requests). */
  private spawnController(what: Launch): Promise<ChildProcess> {
    return new Promise((resolve, reject) => {
      log(`starting controller (${what.source}): ${what.executable} ${what.args.join(' ')}`);
      const proc = spawn(what.executable, [...what.args], {
        cwd: this.node.dir,
        env: { ...process.env, ...what.environment, [LAB_SUPERVISOR_ENV]: this.node.socket },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      this.spawning = proc;
      const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(
          new FleetError(
            'ACTION_FAILED',
            `the controller did not accept requests within ${this.readyTimeoutMs} ms`,
          ),
        );
      }, this.readyTimeoutMs);
      let ready = false;
      lines.on('line', (line) => {
        const port = ready ? null : readyPort(line);
        if (port === null) {
          log(`controller: ${line}`);
          return;
        }
        ready = true;
        this.spawning = undefined;
        clearTimeout(timer);
        this.state.flags = { ...this.state.flags, port };
        resolve(proc);
      });
      proc.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      proc.once('exit', (code, signal) => {
        if (ready) return;
        if (this.spawning === proc) this.spawning = undefined;
        clearTimeout(timer);
        reject(
          new FleetError(
            'ACTION_FAILED',
            `the controller exited (${signal ?? `code ${code}`}) before accepting requests; see ${this.node.log}`,
          ),
        );
      });
    });
  }

  private async stopChild(): Promise<void> {
    const proc = this.child;
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
  }

  async start(attempts: number): Promise<void> {
    let what: Launch;
    try {
      what = await this.launch();
    } catch (error) {
      // A bad definition is refused, never retried or guessed around.
      if (!this.held) await this.failed(error);
      throw error;
    }
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.running(await this.spawnController(what), what);
        return;
      } catch (error) {
        // A restart can race the old process for its port; a short wait settles it.
        if (attempt >= attempts || this.stopping || this.held) {
          // Stopped on request meanwhile: the stop records the state, not this start.
          if (!this.held) await this.failed(error);
          throw error;
        }
        await sleep(500);
      }
    }
  }

  /** Records a controller that accepts requests, and watches it for a crash. */
  private async running(proc: ChildProcess, what: Launch): Promise<void> {
    this.child = proc;
    this.state.flags = { ...this.state.flags, nodeId: what.nodeId };
    this.state.pid = proc.pid ?? null;
    this.state.startedAt = new Date().toISOString();
    this.state.state = 'running';
    delete this.state.error;
    await this.persist();
    log(
      `controller ${proc.pid} runs as ${this.state.flags.nodeId} on port ${this.state.flags.port}`,
    );
    proc.once('exit', (code, signal) => void this.onExit(proc, code, signal));
  }

  private async onExit(
    proc: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<void> {
    if (this.stopping || this.restarting || this.held || proc !== this.child) return;
    log(`controller ${proc.pid} exited unexpectedly (${signal ?? `code ${code}`})`);
    this.crashes = recentCrashes(this.crashes, Date.now());
    this.state.pid = null;
    if (this.crashes.length > MAX_CRASHES) {
      this.state.state = 'failed';
      this.state.error = `crashed ${this.crashes.length} times within ${CRASH_WINDOW_MS / 1000} s; not restarted`;
      await this.persist();
      log(this.state.error);
      return;
    }
    this.state.state = 'restarting';
    this.state.restarts += 1;
    await this.persist();
    await sleep(500 * this.crashes.length);
    if (!this.stopping && !this.restarting && !this.held)
      await this.start(3).catch((error: Error) => log(`restart failed: ${error.message}`));
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Serves one control request (contract §13), one at a time. */
  handle(request: LabSupervisorRequest): Promise<LabSupervisorState> {
    return this.serialised(async () => {
      if ('status' in request) return { ...this.state };
      if (this.stopping) throw new FleetError('ACTION_FAILED', 'the supervisor is stopping');
      this.restarting = true;
      try {
        if ('stop' in request) await this.stopOnRequest();
        else await this.restartOnRequest(request.restart.nodeId);
        return { ...this.state };
      } finally {
        this.restarting = false;
      }
    });
  }

  private async stopOnRequest(): Promise<void> {
    log('stop requested');
    this.held = true;
    // A crash restart in flight is not waited for: its controller is killed outright.
    this.spawning?.kill('SIGKILL');
    await this.stopChild();
    this.child = undefined;
    this.state.pid = null;
    this.state.state = 'stopped';
    delete this.state.error;
    await this.persist();
  }

  private async restartOnRequest(nodeId: string | undefined): Promise<void> {
    log(`restart requested${nodeId ? ` with --node-id ${nodeId}` : ''}`);
    this.held = false;
    this.state.state = 'restarting';
    await this.persist();
    await this.stopChild();
    this.state.restarts += 1;
    if (nodeId !== undefined) {
      try {
        await this.recordNodeId(nodeId);
      } catch (error) {
        await this.failed(error);
        throw error;
      }
    }
    await this.start(3);
  }

  async shutdown(signal: string, control: Server): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    log(`${signal}: stopping`);
    // Not waiting for a restart in flight: a controller still starting is killed outright.
    this.spawning?.kill('SIGKILL');
    await this.stopChild();
    await closeControl(control, this.node.socket);
    this.state.pid = null;
    this.state.state = 'stopped';
    await this.persist();
    log('stopped');
    process.exit(0);
  }
}
