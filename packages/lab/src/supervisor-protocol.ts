/**
 * The lab supervisor's control channel (contract §13): each lab controller runs under a small
 * supervisor that restarts it with new flags when asked — the lab's stand-in for a systemd unit's
 * ExecStart, so the transport-identity domain can change a controller's `--node-id` and restart it
 * (contract §10.2). The supervisor listens on a unix socket whose path it hands the controller in
 * `FLEET_LAB_SUPERVISOR`; the protocol is one JSON line in, one JSON line out, per connection.
 *
 * Only the lab speaks it: its supervisor serves it (control-server.ts), and its bootstrap adapter
 * (adapter.ts) is the client a lab node's controller reaches its supervisor through — the node
 * half of a domain asks `ctx.controllerSupervisor()`, core's seam, never this socket.
 */
import { connect } from 'node:net';
import { ERROR_CODES, FleetError, parseStrictJson, type ErrorCode } from '@fleet/core';
import * as z from '@fleet/core/zod';

/** The environment variable that tells a lab controller where its supervisor listens. */
export const LAB_SUPERVISOR_ENV = 'FLEET_LAB_SUPERVISOR';

/** A restart waits for the new controller to accept requests: a cold start, so generous. */
export const DEFAULT_SUPERVISOR_TIMEOUT_MS = 60_000;
const MAX_LINE_BYTES = 64 * 1024;

const nodeIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'must be a node id');

export const labSupervisorFlagsSchema = z.strictObject({
  nodeId: nodeIdSchema,
  /** The fixed port, chosen at the first start and reused by every restart (0 before that). */
  port: z.number().int().min(0).max(65535),
});
export type LabSupervisorFlags = z.infer<typeof labSupervisorFlagsSchema>;

/** What a supervisor reports, and records in `DIR/nodes/<host>/supervisor.json`. */
export const labSupervisorStateSchema = z.strictObject({
  host: z.string(),
  flags: labSupervisorFlagsSchema,
  /** The controller's pid; `null` while none runs. */
  pid: z.number().int().positive().nullable(),
  startedAt: z.string().nullable(),
  /** The supervisor's own pid (in the virtual lab: the one process serving every node). */
  supervisorPid: z.number().int().positive(),
  state: z.enum(['starting', 'running', 'restarting', 'failed', 'stopped']),
  /** Restarts asked for, plus restarts after a crash. */
  restarts: z.number().int().nonnegative(),
  /** The node's home, the controller's `--home`. */
  home: z.string(),
  virtual: z.boolean(),
  /** Why the last start failed, when `state` is `failed`. */
  error: z.string().optional(),
});
export type LabSupervisorState = z.infer<typeof labSupervisorStateSchema>;

/**
 * The lab supervisor's optional definition of what it runs, `~/.config/fleet/lab-controller.json`
 * in the node's home (the lab bootstrap adapter writes it for a runtime generation): the argv —
 * `command[0]` the node binary, the rest its arguments — and extra environment. When present, the
 * supervisor spawns it at every (re)start instead of the dev checkout's `fleet controller serve`.
 */
export const LAB_CONTROLLER_DEFINITION_PATH = '~/.config/fleet/lab-controller.json';
/** The `schema` a lab controller definition names. */
export const LAB_CONTROLLER_DEFINITION_SCHEMA = 'fleet.lab-controller/v1';

/** What `~/.config/fleet/lab-controller.json` holds (strict: an unknown field is refused). */
export const labControllerDefinitionSchema = z.strictObject({
  schema: z.literal(LAB_CONTROLLER_DEFINITION_SCHEMA),
  command: z
    .array(
      z
        .string()
        .min(1)
        .refine((arg) => !arg.includes('\0'), 'must not hold a NUL byte'),
    )
    .min(1)
    .refine((argv) => (argv[0] ?? '').startsWith('/'), {
      message: 'must start with an absolute path to the node binary',
    }),
  environment: z.record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
    z.string().refine((value) => !value.includes('\0'), 'must not hold a NUL byte'),
  ),
});
export type LabControllerDefinition = z.infer<typeof labControllerDefinitionSchema>;

export const labSupervisorRequestSchema = z.union([
  z.strictObject({ restart: z.strictObject({ nodeId: nodeIdSchema.optional() }) }),
  z.strictObject({ status: z.strictObject({}) }),
  /** Stops the controller; the supervisor stays up (state `stopped`) until a `restart`. */
  z.strictObject({ stop: z.strictObject({}) }),
]);
export type LabSupervisorRequest = z.infer<typeof labSupervisorRequestSchema>;

export const labSupervisorResponseSchema = z.union([
  z.strictObject({ ok: z.literal(true), state: labSupervisorStateSchema }),
  z.strictObject({
    ok: z.literal(false),
    error: z.strictObject({ code: z.string(), message: z.string() }),
  }),
]);
export type LabSupervisorResponse = z.infer<typeof labSupervisorResponseSchema>;

export interface LabSupervisorClient {
  readonly socketPath: string;
  /** The supervisor's current record. */
  status(): Promise<LabSupervisorState>;
  /**
   * Stops the controller and starts it again with `nodeId` (default: the current one) on the same
   * port; resolves once the new controller accepts requests, with its pid.
   */
  restart(flags?: { nodeId?: string }): Promise<LabSupervisorState>;
  /** Stops the controller and keeps it stopped (state `stopped`) until the next `restart`. */
  stop(): Promise<LabSupervisorState>;
}

function supervisorError(socketPath: string, error: unknown): FleetError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT' || code === 'ECONNREFUSED'
      ? 'no supervisor is listening'
      : (code ?? (error instanceof Error ? error.message : String(error)));
  return new FleetError('HOST_UNREACHABLE', `lab supervisor at ${socketPath}: ${why}`, {
    cause: error,
  });
}

/** Sends one request and reads the one-line answer. */
async function ask(
  socketPath: string,
  request: LabSupervisorRequest,
  timeoutMs: number,
): Promise<LabSupervisorResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let buffer = '';
    let done = false;
    const finish = (error: Error | null, value?: LabSupervisorResponse): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value as LabSupervisorResponse);
    };
    const timer = setTimeout(
      () =>
        finish(
          new FleetError(
            'HOST_UNREACHABLE',
            `lab supervisor at ${socketPath}: no answer within ${timeoutMs} ms`,
          ),
        ),
      timeoutMs,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE_BYTES) {
        finish(
          new FleetError('RESPONSE_INVALID', `lab supervisor at ${socketPath}: answer too long`),
        );
        return;
      }
      const end = buffer.indexOf('\n');
      if (end === -1) return;
      try {
        const value = parseStrictJson(
          buffer.slice(0, end),
          `lab supervisor answer`,
          'RESPONSE_INVALID',
        );
        const parsed = labSupervisorResponseSchema.safeParse(value);
        if (!parsed.success)
          throw new FleetError(
            'RESPONSE_INVALID',
            `lab supervisor at ${socketPath}: unexpected answer`,
          );
        finish(null, parsed.data);
      } catch (error) {
        finish(error as Error);
      }
    });
    socket.on('error', (error) => finish(supervisorError(socketPath, error)));
    socket.on('close', () =>
      finish(supervisorError(socketPath, new Error('closed without an answer'))),
    );
  });
}

function unwrap(socketPath: string, response: LabSupervisorResponse): LabSupervisorState {
  if (response.ok) return response.state;
  const { code, message } = response.error;
  const known = Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : 'ACTION_FAILED';
  throw new FleetError(known, `lab supervisor at ${socketPath}: ${message}`);
}

/** A typed client of one supervisor's socket (`DIR/nodes/<host>/supervisor.sock`). */
export function labSupervisorClient(
  socketPath: string,
  options: { readonly timeoutMs?: number } = {},
): LabSupervisorClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SUPERVISOR_TIMEOUT_MS;
  return {
    socketPath,
    status: async () => unwrap(socketPath, await ask(socketPath, { status: {} }, timeoutMs)),
    restart: async (flags = {}) =>
      unwrap(
        socketPath,
        await ask(
          socketPath,
          { restart: flags.nodeId === undefined ? {} : { nodeId: flags.nodeId } },
          timeoutMs,
        ),
      ),
    stop: async () => unwrap(socketPath, await ask(socketPath, { stop: {} }, timeoutMs)),
  };
}
