/**
 * The resident operator process (docs/resident.md): fleet's CLI, loaded once, running the
 * operator's repeated verbs one call at a time for the CLI's `bin/run.js` on this user's socket, so a call
 * pays Node.js's start and a socket instead of loading oclif, core and the plugins again.
 *
 * A call runs in this process as it would in its own (`call-scope.ts`); what a fresh process gives
 * for free is checked instead: the code on disk is still the code loaded (else the call is declined
 * and the resident ends), and the call left nothing running behind it (else the resident ends
 * after it). One call at a time: a second caller is declined and runs the verb itself.
 */
import { chmodSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import * as z from '@fleet/core/zod';
import { enterCall } from './call-scope.js';
import { Frame, FrameReader, encodeFrame, type CallRequest, type ResidentInfo } from './frames.js';
import { residentVerb, type ResidentPlace } from './place.js';

export interface ResidentOptions {
  readonly place: ResidentPlace;
  readonly idleMinutes: number;
  /** The CLI's bin script (a call's `process.argv[1]`). */
  readonly binPath: string;
  /** Runs one verb in this process: oclif's `execute` over the CLI. */
  readonly execute: (argv: readonly string[]) => Promise<unknown>;
  /** Whether the code on disk is still the code this process loaded. */
  readonly current: () => boolean;
  /** Resets what a fresh process would not carry over from an earlier call. */
  readonly freshState: () => Promise<void>;
  /** One line for the resident's own log. */
  readonly log: (line: string) => void;
  /** How the resident ends (`process.exit` by default). */
  readonly exit?: (code: number) => void;
  /** Raises SIGINT in this process for an interrupted call (by default, `process.kill`). */
  readonly interrupt?: () => void;
  /** How long a call's leftover work may run on before the resident gives up on it. */
  readonly drainMs?: number;
  /** How often the resident checks that its socket's name still leads to it. */
  readonly socketCheckMs?: number;
}

const callRequestSchema = z.strictObject({
  argv: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  cwd: z.string().startsWith('/'),
  umask: z.number().int().min(0).max(0o777),
  stdoutIsTTY: z.boolean(),
  stderrIsTTY: z.boolean(),
  columns: z.number().int().positive().optional(),
});

/**
 * The variables that choose oclif's data, config and cache directories — so which plugins a call
 * loads and where it keeps their state. A call whose values differ from the resident's own is
 * declined: the resident watches its own directories' plugins for changes, no others.
 */
export const PLUGIN_DIR_VARIABLES = [
  'HOME',
  'XDG_DATA_HOME',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'FLEET_DATA_DIR',
  'FLEET_CONFIG_DIR',
  'FLEET_CACHE_DIR',
] as const;

/** Whether `env` chooses the same plugin directories as `own`. */
export function samePluginDirs(
  env: Readonly<Record<string, string | undefined>>,
  own: Readonly<Record<string, string | undefined>>,
): boolean {
  return PLUGIN_DIR_VARIABLES.every((key) => env[key] === own[key]);
}

/** Active resources by type (`process.getActiveResourcesInfo`), to compare after a call. */
function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo())
    counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

function within(now: Map<string, number>, baseline: Map<string, number>): boolean {
  return [...now].every(([type, count]) => count <= (baseline.get(type) ?? 0));
}

/**
 * Waits until the call's work is done as a process of its own would: nothing it started still
 * keeps the event loop alive. False when something still does after `limitMs`.
 */
async function drained(baseline: Map<string, number>, limitMs: number): Promise<boolean> {
  const until = Date.now() + limitMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    if (within(resourceCounts(), baseline)) return true;
    if (Date.now() > until) return false;
  }
}

/**
 * Reads a call frame's request, or why the resident declines it before asking whether its code
 * is still current (the one check that also ends the resident).
 */
function readCall(
  payload: Buffer,
  ownEnv: Readonly<Record<string, string | undefined>>,
  state: { readonly busy: boolean; readonly stopping: boolean },
): { readonly request: CallRequest } | { readonly declined: string } {
  const parsed = callRequestSchema.safeParse(JSON.parse(payload.toString('utf8')));
  if (!parsed.success) return { declined: 'the call is not one this resident reads' };
  if (!residentVerb(parsed.data.argv)) return { declined: 'not a verb the resident runs' };
  if (state.busy || state.stopping)
    return { declined: state.busy ? 'busy with another call' : 'ending' };
  if (!samePluginDirs(parsed.data.env, ownEnv))
    return { declined: 'another home, or other oclif directories, than its own' };
  if (!statSync(parsed.data.cwd, { throwIfNoEntry: false })?.isDirectory())
    return { declined: 'the working directory is gone' };
  return { request: parsed.data };
}

/**
 * Runs the verb inside the entered call and waits for its work to drain; `leave` restores the
 * process whatever happened. `clean` is false when the verb threw or left work running.
 */
async function executeCall(
  options: ResidentOptions,
  request: CallRequest,
  baseline: Map<string, number>,
  leave: () => void,
): Promise<{ readonly clean: boolean; readonly code: number }> {
  let clean: boolean;
  let code: number;
  try {
    await options.execute(request.argv);
    clean = await drained(baseline, options.drainMs ?? 10_000);
  } catch (error) {
    process.stderr.write(`Error: ${(error as Error).message}\n`);
    process.exitCode = 1;
    clean = false;
  } finally {
    code = Number(process.exitCode ?? 0);
    leave();
  }
  return { clean, code };
}

/** Resolves once `server` listens on `socket`; rejects with the listen error. */
function listen(server: Server, socket: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Hands each frame arriving on `connection` to `onFrame`; a connection that garbles one is dropped. */
function readFrames(
  connection: Socket,
  onFrame: (connection: Socket, type: number, payload: Buffer) => void,
): void {
  const reader = new FrameReader();
  connection.on('error', () => connection.destroy());
  connection.on('data', (chunk: Buffer) => {
    try {
      for (const frame of reader.push(chunk)) onFrame(connection, frame.type, frame.payload);
    } catch {
      connection.destroy();
    }
  });
}

/** Enters the call with its output sent to the caller as frames; `onExit` for `process.exit`. */
function enterCallOver(
  connection: Socket,
  request: CallRequest,
  binPath: string,
  onExit: (code: number) => void,
): () => void {
  return enterCall(
    request,
    binPath,
    (fd, bytes) => {
      if (!connection.destroyed)
        connection.write(encodeFrame(fd === 1 ? Frame.stdout : Frame.stderr, bytes));
    },
    onExit,
  );
}

/** Listens on the place's socket; resolves once it listens. The process ends when the resident does. */
// One closure on purpose: its short steps share the resident's state (busy, stopping, idle timer).
export async function serveResident(options: ResidentOptions): Promise<Server> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const interrupt = options.interrupt ?? (() => process.kill(process.pid, 'SIGINT'));
  const startedAt = new Date().toISOString();
  const ownEnv = { ...process.env };
  let calls = 0;
  let busy = false;
  let stopping = false;
  let closed = false;
  let socketIno: number | undefined = undefined; // set once it listens
  let idle: NodeJS.Timeout | undefined;

  const removeSocket = (): void => {
    // Only the socket this process made: a later resident may have taken the name since.
    const stats = lstatSync(options.place.socket, { throwIfNoEntry: false });
    if (stats !== undefined && stats.ino === socketIno) unlinkSync(options.place.socket);
  };
  const shutdown = (why: string): void => {
    stopping = true;
    if (busy || closed) return; // a call ends first (runCall shuts down after it)
    closed = true;
    options.log(`resident ${process.pid} ends: ${why}`);
    clearTimeout(idle);
    removeSocket();
    server.close();
    exit(0);
  };
  const armIdle = (): void => {
    clearTimeout(idle);
    if (closed) return;
    idle = setTimeout(
      () => shutdown(`${options.idleMinutes} minutes without a call`),
      options.idleMinutes * 60_000,
    );
  };

  const info = (): ResidentInfo => ({
    pid: process.pid,
    socket: options.place.socket,
    startedAt,
    calls,
    idleMinutes: options.idleMinutes,
    busy,
  });

  async function runCall(connection: Socket, request: CallRequest): Promise<void> {
    busy = true;
    calls += 1;
    clearTimeout(idle);
    connection.write(encodeFrame(Frame.accepted));
    let ended = false;
    const end = (code: number): void => {
      if (ended) return;
      ended = true;
      connection.end(encodeFrame(Frame.exit, JSON.stringify({ code })));
    };
    // The caller gone (Ctrl-C, or killed) is what Ctrl-C is to a verb in its own process.
    connection.once('close', () => {
      if (!ended) interrupt();
    });
    await options.freshState();
    const baseline = resourceCounts();
    let leave: () => void;
    try {
      leave = enterCallOver(connection, request, options.binPath, (code) => {
        end(code);
        removeSocket();
      });
    } catch (error) {
      // The caller's working directory went away meanwhile: said as its own process would say it.
      connection.write(encodeFrame(Frame.stderr, `Error: ${(error as Error).message}\n`));
      end(1);
      busy = false;
      return stopping ? shutdown('asked to stop') : armIdle();
    }
    const { clean, code } = await executeCall(options, request, baseline, leave);
    end(code);
    busy = false;
    if (!clean) shutdown(`the call \`${request.argv.join(' ')}\` left work running`);
    else if (stopping) shutdown('asked to stop');
    else armIdle();
  }

  function onFrame(connection: Socket, type: number, payload: Buffer): void {
    if (type === Frame.ping) {
      connection.end(encodeFrame(Frame.info, JSON.stringify(info())));
    } else if (type === Frame.quit) {
      connection.end(encodeFrame(Frame.info, JSON.stringify(info())));
      shutdown('asked to stop');
    } else if (type === Frame.signal) {
      if (busy) interrupt();
    } else if (type === Frame.call) {
      const decline = (reason: string): void => {
        connection.end(encodeFrame(Frame.declined, JSON.stringify({ reason })));
      };
      const read = readCall(payload, ownEnv, { busy, stopping });
      if ('declined' in read) return decline(read.declined);
      if (!options.current()) {
        decline('the code on disk changed');
        return shutdown('the code on disk changed since it started');
      }
      void runCall(connection, read.request);
    } else {
      connection.destroy();
    }
  }

  const server = createServer((connection) => readFrames(connection, onFrame));
  process.once('exit', () => {
    try {
      removeSocket();
    } catch {
      // exiting anyway
    }
  });
  await listen(server, options.place.socket);
  chmodSync(options.place.socket, 0o600);
  socketIno = lstatSync(options.place.socket).ino;
  options.log(`resident ${process.pid} listens on ${options.place.socket}`);
  armIdle();
  // A resident nobody can reach ends: its socket removed, or replaced by another resident's (two
  // that started at once, each taking the name of a killed one's socket).
  const ownSocket = setInterval(() => {
    if (lstatSync(options.place.socket, { throwIfNoEntry: false })?.ino !== socketIno)
      shutdown('its socket was removed or taken by another resident');
  }, options.socketCheckMs ?? 30_000);
  ownSocket.unref();
  // Whoever closes the server (shutdown, or a test or embedder calling close()), no timer of this
  // resident outlives it: a closed resident must not hold its process open for the idle minutes.
  server.once('close', () => {
    closed = true;
    clearInterval(ownSocket);
    clearTimeout(idle);
  });
  return server;
}
