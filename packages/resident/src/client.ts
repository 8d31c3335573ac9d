/**
 * The caller's side of the resident operator process (docs/resident.md): the CLI's `bin/run.js`
 * imports it once `place.ts` found this user's resident listening, and the `fleet resident`
 * commands ask the resident what it is and to end.
 */
import { connect } from 'node:net';
import { Frame, FrameReader, encodeFrame, type CallRequest, type ResidentInfo } from './frames.js';
import { usablePlace, type ResidentPlace } from './place.js';

/**
 * Why a verb is to run in this process after all: nothing listens on the socket (`absent`: a
 * resident that was killed left it), or the resident answered and declined (busy, other plugin
 * directories, its code changed on disk).
 */
export type NotRun = 'absent' | 'declined';

/**
 * Runs `argv` in the resident listening at `place` (`usablePlace`) and gives its exit code, or why
 * the verb is to run in this process ({@link NotRun}). Output goes to this process's stdout and
 * stderr as the call writes it; Ctrl-C reaches the call.
 */
export async function callResident(
  place: ResidentPlace,
  argv: readonly string[],
): Promise<number | NotRun> {
  const request: CallRequest = {
    argv,
    env: Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    ),
    cwd: process.cwd(),
    umask: process.umask(),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    ...(process.stdout.columns ? { columns: process.stdout.columns } : {}),
  };
  return new Promise((resolve) => {
    const socket = connect(place.socket);
    const reader = new FrameReader();
    let accepted = false;
    let answered = false;
    let interrupted = false;
    let code: number | undefined;
    const onInterrupt = (): void => {
      // A second Ctrl-C does not wait for the call: this process ends, and the resident sees
      // its caller go away (the same as an interrupt).
      if (interrupted) process.exit(130);
      interrupted = true;
      socket.write(encodeFrame(Frame.signal));
    };
    socket.on('connect', () => socket.write(encodeFrame(Frame.call, JSON.stringify(request))));
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of reader.push(chunk)) {
          answered = true;
          if (frame.type === Frame.accepted) {
            accepted = true;
            process.on('SIGINT', onInterrupt);
          } else if (frame.type === Frame.stdout) process.stdout.write(frame.payload);
          else if (frame.type === Frame.stderr) process.stderr.write(frame.payload);
          else if (frame.type === Frame.exit) {
            code = (JSON.parse(frame.payload.toString('utf8')) as { code: number }).code;
          }
        }
      } catch {
        socket.destroy(); // not the resident's protocol: as if it ended (see 'close')
      }
    });
    socket.on('close', () => {
      process.off('SIGINT', onInterrupt);
      if (!accepted) return resolve(answered ? 'declined' : 'absent');
      if (code !== undefined) return resolve(code);
      if (interrupted) return resolve(130);
      process.stderr.write(
        `Error: the resident process ended during the call; its log is beside ${place.socket}\n`,
      );
      resolve(1);
    });
  });
}

/** Sends one frame to the resident and reads its info answer; `undefined` when none listens. */
async function ask(type: number, cliRoot: string): Promise<ResidentInfo | undefined> {
  const place = usablePlace(cliRoot);
  if (place === undefined) return undefined;
  return new Promise((resolve) => {
    const socket = connect(place.socket);
    const reader = new FrameReader();
    let info: ResidentInfo | undefined;
    socket.on('connect', () => socket.write(encodeFrame(type)));
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of reader.push(chunk)) {
          if (frame.type === Frame.info)
            info = JSON.parse(frame.payload.toString('utf8')) as ResidentInfo;
        }
      } catch {
        socket.destroy();
      }
    });
    socket.on('close', () => resolve(info));
  });
}

/** What this user's resident of the CLI at `cliRoot` says of itself, or `undefined` when none listens. */
export function pingResident(cliRoot: string): Promise<ResidentInfo | undefined> {
  return ask(Frame.ping, cliRoot);
}

/** Asks this user's resident of the CLI at `cliRoot` to end (after the call it runs, if any). */
export function quitResident(cliRoot: string): Promise<ResidentInfo | undefined> {
  return ask(Frame.quit, cliRoot);
}
