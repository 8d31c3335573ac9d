/**
 * The resident's socket protocol (docs/resident.md): frames of one type byte, a 4-byte big-endian
 * length and the payload. Output frames carry the bytes a command wrote, as written (a file's
 * bytes from `config export` are not text); the others carry JSON.
 */

/** Frame types. Client to resident: call, ping, quit, signal. Resident to client: the rest. */
export const Frame = {
  call: 0x43, // 'C' the call (JSON: CallRequest)
  ping: 0x50, // 'P' asks for ResidentInfo
  quit: 0x51, // 'Q' asks the resident to end
  signal: 0x53, // 'S' the caller was interrupted (Ctrl-C)
  accepted: 0x41, // 'A' the call runs here now
  declined: 0x4e, // 'N' not here (JSON: { reason }): the caller runs the verb itself
  stdout: 0x31, // '1' bytes for the caller's stdout
  stderr: 0x32, // '2' bytes for the caller's stderr
  exit: 0x58, // 'X' the call ended (JSON: { code })
  info: 0x49, // 'I' the answer to a ping (JSON: ResidentInfo)
} as const;

/** The largest frame either side accepts (a call carries the caller's environment). */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

export function encodeFrame(type: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const head = Buffer.allocUnsafe(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

export interface DecodedFrame {
  readonly type: number;
  readonly payload: Buffer;
}

/** Collects bytes as they arrive and hands out the whole frames among them. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  /** The frames completed by `chunk`; throws on a frame over {@link MAX_FRAME_BYTES}. */
  push(chunk: Buffer): DecodedFrame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: DecodedFrame[] = [];
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (length > MAX_FRAME_BYTES) throw new Error(`a frame of ${length} bytes is over the bound`);
      if (this.pending.length < 5 + length) break;
      frames.push({
        type: this.pending.readUInt8(0),
        payload: this.pending.subarray(5, 5 + length),
      });
      this.pending = this.pending.subarray(5 + length);
    }
    return frames;
  }
}

/** What a call carries: the caller's command line and everything a process inherits. */
export interface CallRequest {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly umask: number;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  readonly columns?: number;
}

/** What a ping answers (`fleet resident status`). */
export interface ResidentInfo {
  readonly pid: number;
  readonly socket: string;
  readonly startedAt: string;
  readonly calls: number;
  readonly idleMinutes: number;
  readonly busy: boolean;
}
