/** Writing answers: JSON bodies, and every error as `{ error: { code, message } }`. */
import type { ServerResponse } from 'node:http';
import {
  FLEET_PROTOCOL_VERSION,
  FleetError,
  PROTOCOL_HEADER,
  describeCode,
  isFleetError,
  type ErrorCode,
  type FleetErrorOptions,
  type Redactor,
  type WireErrorBody,
} from '@fleet/core/node';

/** An error on its way to the wire: code, HTTP status, message, and optional details. */
export interface WireError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly message: string;
  readonly liveSha256?: string | null;
  readonly path?: string;
  /**
   * `ACTION_FAILED`: the tail of what the refused action printed (core `outputTail`). Set only by
   * the install handler, for an answer whose request asked for it (contract §5.2).
   */
  readonly toolOutput?: string;
  /** Close the connection after answering (an oversized or unreadable body). */
  readonly close?: boolean;
}

export interface WireRefusalOptions extends FleetErrorOptions {
  /**
   * The HTTP status, when it is not the code's own (core `ERROR_CODES`): 421 for a `Host` that
   * does not name this controller (contract §7.1; RFC 9110 §15.5.20, Misdirected Request).
   */
  readonly status?: number;
  /** Close the connection after answering (an oversized or unreadable body, a full budget). */
  readonly close?: boolean;
}

/**
 * A refusal the controller's HTTP layer raises itself, with what its answer needs beyond the code:
 * a status of its own, or the connection closed. Raised and read only in the controller's own
 * process, never by a plugin (which has its own copy of core), so {@link toWireError} recognises
 * it with `instanceof`; core errors.ts says why other fleet errors are recognised by shape.
 */
export class WireRefusal extends FleetError {
  /** The HTTP status, when not the code's own; see {@link WireRefusalOptions}. */
  readonly status: number | undefined;
  readonly close: boolean;

  constructor(code: ErrorCode, message: string, options: WireRefusalOptions = {}) {
    super(code, message, options);
    this.name = 'WireRefusal';
    this.status = options.status;
    this.close = options.close ?? false;
  }
}

/** The wire form of any thrown value; unknown errors are `INTERNAL` (500). */
export function toWireError(error: unknown): WireError {
  if (isFleetError(error)) {
    // `PRECONDITION_FAILED`'s fields (core `PreconditionFailedError`), read by shape: a plugin's
    // installer raises it from the plugin's own copy of core (`splicedLive`), past `instanceof`.
    const extra = error as unknown as { liveSha256?: string | null; path?: string };
    const refusal = error instanceof WireRefusal ? error : undefined;
    return {
      code: error.code,
      status: refusal?.status ?? describeCode(error.code).http ?? 500,
      message: error.message,
      ...(extra.liveSha256 === undefined ? {} : { liveSha256: extra.liveSha256 }),
      ...(extra.path === undefined ? {} : { path: extra.path }),
      ...(refusal?.close === true ? { close: true } : {}),
    };
  }
  return { code: 'INTERNAL', status: 500, message: 'internal error in the controller' };
}

/**
 * The body of an error, its message passed through redaction (error text leaves the node too) as
 * an annotation: the digests a message quotes stay whole (core `createRedactor`). An action's
 * output tail is redacted the same way — already redacted in full before it was cut (core
 * `actionOutput`), this is the last pass before it leaves the node.
 */
export function errorBody(error: WireError, redactor: Redactor | undefined): WireErrorBody {
  const redact = (text: string) => (redactor ? redactor.annotation(text) : text);
  return {
    error: {
      code: error.code,
      message: redact(error.message),
      ...(error.liveSha256 === undefined ? {} : { liveSha256: error.liveSha256 }),
      ...(error.path === undefined ? {} : { path: error.path }),
      ...(error.toolOutput === undefined ? {} : { toolOutput: redact(error.toolOutput) }),
    },
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  options: { close?: boolean } = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  // Every answer says which protocol it speaks (a protocol 1 node sent none).
  res.setHeader(PROTOCOL_HEADER, String(FLEET_PROTOCOL_VERSION));
  if (options.close) res.setHeader('connection', 'close');
  res.end(text);
}
