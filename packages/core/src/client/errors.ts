/**
 * How the operator's client turns what went wrong talking to a controller into a fleet error:
 * a wire error keeps the controller's code (so its exit code is core's, contract §7); a connection
 * that could not be made, was cut or took too long is `HOST_UNREACHABLE` naming the host (exit 5),
 * so a fleet-wide verb can report the host unreachable and go on.
 */
import { ERROR_CODES, FleetError, type ErrorCode, type FleetErrorOptions } from '../errors.js';
import {
  FLEET_PROTOCOL_VERSION,
  describeProtocol,
  errorBodySchema,
  protocolOfHeader,
  type WireErrorBody,
} from '../wire/protocol.js';

/** Where a request was going: enough to name the host in every message. */
export interface RequestTarget {
  readonly host: string;
  readonly url: string;
  readonly operation: string;
}

export interface ControllerErrorOptions extends FleetErrorOptions {
  readonly status?: number;
  readonly wire?: WireErrorBody['error'];
}

/**
 * A fleet error raised while talking to one controller. It is still a plain `FleetError` (code,
 * exit code, envelope); the extra fields let a verb act on the details, e.g. the live sha256 the
 * node reported with `PRECONDITION_FAILED`.
 */
export class ControllerError extends FleetError {
  readonly host: string;
  /** The HTTP status, when the controller answered at all. */
  readonly status: number | undefined;
  /** The controller's own error body, when it sent one. */
  readonly wire: WireErrorBody['error'] | undefined;

  constructor(
    code: ErrorCode,
    host: string,
    message: string,
    options: ControllerErrorOptions = {},
  ) {
    super(code, message, options);
    this.name = 'ControllerError';
    this.host = host;
    this.status = options.status;
    this.wire = options.wire;
  }
}

// Socket-level failures that mean "we could not talk to the host": all exit 5.
const UNREACHABLE_ERRNOS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed while sending',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'no route to host',
  EHOSTDOWN: 'host is down',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network is down',
  ENOTFOUND: 'name not resolved',
  EAI_AGAIN: 'name resolution failed',
  UND_ERR_SOCKET: 'socket error',
};

/** A network-level failure (no usable HTTP answer) as `HOST_UNREACHABLE`. */
export function unreachable(target: RequestTarget, cause: unknown): ControllerError {
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
  const why =
    (errno && UNREACHABLE_ERRNOS[errno]) ??
    (cause instanceof Error && cause.message === 'socket hang up'
      ? 'connection closed before an answer'
      : cause instanceof Error
        ? cause.message
        : String(cause));
  return new ControllerError(
    'HOST_UNREACHABLE',
    target.host,
    `host ${target.host} (${target.url}) is unreachable: ${why}`,
    { cause },
  );
}

export function timedOut(target: RequestTarget, timeoutMs: number): ControllerError {
  return new ControllerError(
    'HOST_UNREACHABLE',
    target.host,
    `host ${target.host} (${target.url}) is unreachable: no answer to ${target.operation} within ${timeoutMs} ms`,
  );
}

// When a controller answers with a code this client does not know (a newer controller, or
// something that is not a fleet controller), the HTTP status still decides the class of failure:
// an auth refusal must stay exit 4 whatever it is called.
const STATUS_FALLBACK: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'AUTH_INVALID',
  403: 'SCOPE_DENIED',
  404: 'OP_UNKNOWN',
  408: 'REQUEST_TIMEOUT',
  412: 'PRECONDITION_FAILED',
  413: 'REQUEST_TOO_LARGE',
  423: 'LOCKED',
  502: 'HOST_UNREACHABLE',
  503: 'OVERLOADED',
  504: 'HOST_UNREACHABLE',
};

function fallbackCode(status: number): ErrorCode {
  return STATUS_FALLBACK[status] ?? (status >= 500 ? 'IO_ERROR' : 'BAD_REQUEST');
}

function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * A non-2xx answer as a fleet error. `body` is the parsed JSON body, or `undefined` when it was
 * not JSON. The controller's message is kept (it is redacted on the node) and prefixed with the
 * host, so a fleet-wide report says which node refused.
 */
export function wireError(target: RequestTarget, status: number, body: unknown): ControllerError {
  const parsed = errorBodySchema.safeParse(body);
  if (parsed.success) {
    const wire = parsed.data.error;
    const known = isKnownCode(wire.code);
    let code: ErrorCode = known ? (wire.code as ErrorCode) : fallbackCode(status);
    // An unknown code on a 401/403 is an authentication or scope refusal (exit 4). A known code
    // keeps its own meaning: PATH_OUTSIDE_ROOT is a 403 too, and a policy refusal (exit 7).
    if (
      !known &&
      (status === 401 || status === 403) &&
      ERROR_CODES[code].exit !== ERROR_CODES.AUTH_INVALID.exit
    ) {
      code = status === 401 ? 'AUTH_INVALID' : 'SCOPE_DENIED';
    }
    const unknownNote = known ? '' : ` (controller code ${wire.code})`;
    // A refused action's output tail (redacted on the node) goes on with the error, typed, so the
    // CLI shows it under the one-line message and in --json.
    return new ControllerError(code, target.host, `${target.host}: ${wire.message}${unknownNote}`, {
      status,
      wire,
      ...(wire.toolOutput === undefined ? {} : { toolOutput: wire.toolOutput }),
    });
  }
  const code = fallbackCode(status);
  return new ControllerError(
    code,
    target.host,
    `${target.host}: ${target.operation} failed with HTTP ${status} and no fleet error body (is ${target.url} a fleet controller?)`,
    { status },
  );
}

/**
 * A fleet answer in another wire protocol than this client's: nothing of it is used. The message
 * names both versions and which side to upgrade.
 */
export function protocolMismatch(
  target: RequestTarget,
  header: string | readonly string[] | undefined,
): ControllerError {
  const peer = protocolOfHeader(header);
  const fix =
    peer !== null && peer > FLEET_PROTOCOL_VERSION
      ? 'upgrade this fleet CLI to one that speaks it'
      : `upgrade the node (fleet upgrade ${target.host} --confirm), or use a fleet CLI of its protocol`;
  return new ControllerError(
    'PROTOCOL_MISMATCH',
    target.host,
    `${target.host}: the node speaks ${describeProtocol(header)}; this fleet CLI speaks protocol ${FLEET_PROTOCOL_VERSION}: ${fix}`,
  );
}

/** A 2xx answer whose body does not match the route's response schema. */
export function invalidResponse(target: RequestTarget, why: string): ControllerError {
  return new ControllerError(
    'RESPONSE_INVALID',
    target.host,
    `${target.host}: the controller's answer to ${target.operation} is not valid: ${why}`,
    {
      suggestions: [
        'the controller may run an incompatible protocol version: compare `fleet version`',
      ],
    },
  );
}
