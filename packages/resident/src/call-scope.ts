/**
 * One call's process, inside the resident (docs/resident.md): for as long as the call runs, the
 * resident's environment, working directory, umask, argv, stdout and stderr are the caller's, and
 * `process.exit` ends the call for the caller. {@link enterCall} sets all of it and gives back the
 * function that puts the resident's own back.
 */
import type { CallRequest } from './frames.js';

type Write = typeof process.stdout.write;

/** Where a call's output goes: 1 for stdout, 2 for stderr. */
export type OutputSink = (fd: 1 | 2, bytes: Buffer) => void;

/** Replaces the environment's contents in place (the real one: child processes and getenv see it). */
export function replaceEnv(env: Readonly<Record<string, string>>): void {
  for (const key of Object.keys(process.env)) {
    if (!Object.hasOwn(env, key)) delete process.env[key];
  }
  for (const [key, value] of Object.entries(env)) {
    if (process.env[key] !== value) process.env[key] = value;
  }
}

/** A stream's `write` that hands the bytes to `sink` instead (encoding and callback as Node's). */
function writeTo(fd: 1 | 2, sink: OutputSink): Write {
  return function write(
    chunk: Uint8Array | string,
    encoding?: BufferEncoding | ((error?: Error | null) => void),
    callback?: (error?: Error | null) => void,
  ): boolean {
    const done = typeof encoding === 'function' ? encoding : callback;
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8')
        : Buffer.from(chunk);
    sink(fd, bytes);
    if (done) process.nextTick(done);
    return true;
  };
}

/** Sets an own property of a stream for the call; gives back the function that undoes it. */
function override(target: object, key: string, value: unknown): () => void {
  const had = Object.getOwnPropertyDescriptor(target, key);
  Object.defineProperty(target, key, { value, configurable: true, writable: true });
  return () => {
    if (had) Object.defineProperty(target, key, had);
    else delete (target as Record<string, unknown>)[key];
  };
}

type Listener = (...args: unknown[]) => void;

/**
 * The listeners a call adds to `emitter` and leaves there: a process of its own would drop them
 * with itself (oclif waits for a `drain` of stdout on every run, for one). Gives back the function
 * that removes them, after handing the `exit` ones to `onExitListener`.
 */
function listenersAdded(
  emitter: NodeJS.EventEmitter,
  onExitListener: (listener: Listener) => void,
): () => void {
  const before = new Map(
    emitter.eventNames().map((name) => [name, new Set(emitter.rawListeners(name))] as const),
  );
  return () => {
    for (const name of emitter.eventNames()) {
      for (const listener of emitter.rawListeners(name) as Listener[]) {
        if (before.get(name)?.has(listener)) continue;
        emitter.removeListener(name, listener);
        if (name === 'exit') onExitListener(listener);
      }
    }
  };
}

/**
 * Makes the process the caller's for one call. `onExit` runs when the call calls `process.exit`
 * (the resident then ends too: what the call left behind is not known).
 */
export function enterCall(
  request: CallRequest,
  binPath: string,
  sink: OutputSink,
  onExit: (code: number) => void,
): () => void {
  const saved = {
    env: { ...process.env } as Record<string, string>,
    cwd: process.cwd(),
    argv: process.argv,
    // The very function, put back when the call ends (a bound copy would not be the same one).
    // eslint-disable-next-line @typescript-eslint/unbound-method
    exit: process.exit,
    exitCode: process.exitCode,
  };
  const undo: (() => void)[] = [];
  process.chdir(request.cwd); // first: when it throws, nothing else was changed
  replaceEnv(request.env);
  const umask = process.umask(request.umask);
  process.argv = [process.execPath, binPath, ...request.argv];
  undo.push(override(process.stdout, 'write', writeTo(1, sink)));
  undo.push(override(process.stderr, 'write', writeTo(2, sink)));
  undo.push(override(process.stdout, 'isTTY', request.stdoutIsTTY ? true : undefined));
  undo.push(override(process.stderr, 'isTTY', request.stderrIsTTY ? true : undefined));
  undo.push(override(process.stdout, 'columns', request.columns));
  undo.push(override(process.stderr, 'columns', request.columns));
  // A call's `process.on('exit')` work runs when the call ends, as it would when its process did,
  // its output still the caller's (`undo` runs last-in first: these three steps come first).
  const exiting: Listener[] = [];
  undo.push(() => {
    for (const listener of exiting) listener(Number(process.exitCode ?? 0));
  });
  for (const emitter of [process, process.stdout, process.stderr]) {
    undo.push(listenersAdded(emitter, (listener) => exiting.push(listener)));
  }
  process.exitCode = undefined;
  process.exit = (code?: number | string | null) => {
    onExit(Number(code ?? process.exitCode ?? 0));
    return saved.exit.call(process, code ?? undefined);
  };
  return () => {
    for (const step of undo.reverse()) step();
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    process.argv = saved.argv;
    process.umask(umask);
    process.chdir(saved.cwd);
    replaceEnv(saved.env);
  };
}
