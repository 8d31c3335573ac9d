/** Writing answers: JSON bodies, and every error as `{ error: { code, message } }`. */
import type { ServerResponse } from 'node:http';
import {
  FLEET_PROTOCOL_VERSION,
  PROTOCOL_HEADER,
  describeCode,
  isFleetError,
  type ErrorCode,
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

/** The wire form of any thrown value; unknown errors are `INTERNAL` (500). */
export function toWireError(error: unknown): WireError {
  if (isFleetError(error)) {
    const extra = error as unknown as {
      liveSha256?: string | null;
      path?: string;
      status?: number;
      close?: boolean;
    };
    return {
      code: error.code,
      status: extra.status ?? describeCode(error.code).http ?? 500,
      message: error.message,
      ...(extra.liveSha256 === undefined ? {} : { liveSha256: extra.liveSha256 }),
      ...(extra.path === undefined ? {} : { path: extra.path }),
      ...(extra.close ? { close: true } : {}),
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
