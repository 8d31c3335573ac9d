/**
 * The node side of the SSH recovery path (contract §12; reliability catalogue "Forced-command
 * enforcement"). `authorized_keys` forces `fleet bootstrap receive --home DIR` for the operator's
 * recovery key, so this runs whatever the client asked for. The request is read only from
 * `SSH_ORIGINAL_COMMAND` and treated as data: after trimming it must equal one verb of the
 * allowlist, byte for byte. Nothing else of the environment is used (paths come from `--home`).
 * Every request, accepted or refused, is logged (JSON-quoted, so a payload cannot forge lines).
 * What changes the node — `apply`'s stage and activate, and their refusals — and every refused
 * request also goes into the node's hash-chained audit log, the controller's own chain
 * (docs/audit-log.md, "Writers"), the caller named `ssh:<key fingerprint>` (the `--key` the
 * authorized_keys line passes) or `ssh:forced-command` (a line without it).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { newOperationId, type Registry } from '@fleet/core';
import {
  SSH_CLIENT_PREFIX,
  appendAuditRecords,
  checkFdPath,
  ensureDirUnder,
  recheckParents,
  systemClock,
} from '@fleet/controller';
import {
  receiverHandlers,
  type ReceiverAuditRecord,
  type ReceiverContext,
  type ReceiverHandler,
  type ReceiverHandlers,
} from './receiver-handlers.js';
import { RECEIVER_ERROR_PREFIX, RECOVERY_VERBS, isRecoveryVerb } from './verbs.js';

/** The receiver log, under the node's state directory (as the controller's, 0700/0600). */
export const RECEIVER_LOG = ['.local', 'state', 'fleet', 'receiver.log'] as const;

/** Longest request quoted in the log; longer ones are cut (and say so). */
const LOGGED_REQUEST_CHARS = 512;

export interface ReceiverOptions {
  readonly home: string;
  readonly version: string;
  /** The raw `SSH_ORIGINAL_COMMAND`; `undefined` when the client asked for a shell. */
  readonly originalCommand: string | undefined;
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly loadRegistry: () => Promise<Registry>;
  /** The handler table (tests substitute one); default {@link receiverHandlers}. */
  readonly handlers?: ReceiverHandlers;
  readonly now?: () => Date;
  /**
   * The SHA256 fingerprint of the key the authorized_keys line forces this command for
   * (`SHA256:…`, from its `--key`); absent for a line that names none.
   */
  readonly keyFingerprint?: string;
  /**
   * Checks the sshd running this receiver (sshd-check.ts): why the environment it allows is
   * unsafe, or cannot be told; `undefined` when it is safe. The forced command always passes
   * one (`fleet bootstrap receive`); without one nothing is checked (a receiver run in-process).
   */
  readonly checkSshd?: () => Promise<string | undefined>;
}

/** `ssh:<fingerprint>`, or `ssh:forced-command` when the authorized_keys line names no key. */
export function receiverClient(keyFingerprint: string | undefined): string {
  return `${SSH_CLIENT_PREFIX}${keyFingerprint ?? 'forced-command'}`;
}

export function receiverLogPath(home: string): string {
  return join(home, ...RECEIVER_LOG);
}

/** `"…"` for the log: JSON-quoted, control characters escaped, cut at a bounded length. */
export function quoteRequest(request: string | undefined): string {
  if (request === undefined) return '(none: no command was requested)';
  const cut = request.length > LOGGED_REQUEST_CHARS;
  const quoted = JSON.stringify(cut ? request.slice(0, LOGGED_REQUEST_CHARS) : request)
    // JSON leaves U+2028/U+2029 raw; some log readers take them for line breaks.
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return cut ? `${quoted}… (${request.length} characters)` : quoted;
}

/**
 * Appends `line` to the receiver log: directories 0700, the file 0600, never through a symlink —
 * anywhere on the way: the state directory is walked from the home as the controller walks it
 * (`ensureDirUnder`: a planted `~/.local/state -> /tmp/x` is refused before anything is written),
 * the file opened `O_NOFOLLOW`, its real path and the walked directories checked again before the
 * line goes in. Throws when the line cannot be written.
 */
export async function appendReceiverLog(home: string, line: string): Promise<void> {
  const path = receiverLogPath(home);
  const chain = await ensureDirUnder(home, dirname(path));
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await checkFdPath(home, handle, path);
    await recheckParents(home, chain);
    const stats = await handle.stat();
    if (!stats.isFile()) throw new Error(`${path} is not a regular file`);
    if ((stats.mode & 0o777) !== 0o600) await handle.chmod(0o600);
    await handle.write(`${line.replace(/[\r\n]/g, ' ')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Refuses an accepted verb because of the sshd that runs the receiver (`SSH_ENVIRONMENT_UNSAFE`,
 * exit 7): logged, audited, one line for the operator after the node's code.
 */
async function refuseUnsafeSshd(refusal: {
  readonly verb: string;
  readonly unsafe: string;
  readonly stderr: NodeJS.WritableStream;
  readonly log: (message: string) => Promise<void>;
  readonly audit: (record: ReceiverAuditRecord, id: string | null) => Promise<void>;
}): Promise<number> {
  const message = `refused ${quoteRequest(refusal.verb)}: ${refusal.unsafe}; nothing was done`;
  await refusal.log(`${message} (SSH_ENVIRONMENT_UNSAFE)`).catch(() => undefined);
  await refusal
    .audit(
      {
        operation: 'receiver-request',
        outcome: 'denied',
        code: 'SSH_ENVIRONMENT_UNSAFE',
        detail: message,
      },
      null,
    )
    .catch(() => undefined);
  refusal.stderr.write(
    `${RECEIVER_ERROR_PREFIX}${JSON.stringify({ code: 'SSH_ENVIRONMENT_UNSAFE', message })}\n` +
      `fleet bootstrap receive: ${message}\n`,
  );
  return 7;
}

/** Runs one request; resolves to the process exit code. */
export async function runReceiver(options: ReceiverOptions): Promise<number> {
  const handlers = options.handlers ?? receiverHandlers;
  const records = receiverRecords(options);
  const { log } = records;
  const request = options.originalCommand;
  // Trimmed of ASCII blanks only (what a shell user's quoting leaves), then compared exactly.
  const verb = request?.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  if (verb === undefined || !isRecoveryVerb(verb)) {
    return refuseRequest(request, records, options.stderr);
  }

  try {
    await log(`accepted request ${quoteRequest(request)} (operation ${records.operationId})`);
  } catch (error) {
    // As the controller's audit log: a request that cannot be recorded is not served.
    options.stderr.write(
      `fleet bootstrap receive: the receiver log ${receiverLogPath(options.home)} cannot be written (${(error as Error).message}): nothing was done\n`,
    );
    return 6;
  }

  const unsafe = await options
    .checkSshd?.()
    .catch((error: unknown) => `sshd could not be checked (${(error as Error).message})`);
  if (unsafe !== undefined)
    return refuseUnsafeSshd({ verb, unsafe, stderr: options.stderr, log, audit: records.audit });

  const handler = Object.hasOwn(handlers, verb) ? handlers[verb] : undefined;
  if (!handler) {
    options.stderr.write(
      `fleet bootstrap receive: ${JSON.stringify(verb)} is not available in this runtime (fleet ${options.version})\n`,
    );
    await log(`finished ${quoteRequest(verb)} exit 2 (not available in this runtime)`).catch(
      () => undefined,
    );
    return 2;
  }
  const context: ReceiverContext = {
    home: options.home,
    version: options.version,
    stdin: options.stdin,
    stdout: options.stdout,
    stderr: options.stderr,
    loadRegistry: options.loadRegistry,
    log,
    audit: (record) => records.audit(record),
  };
  return runHandler(handler, context, verb);
}

/** Where one request is recorded: the receiver log and the node's audit log, under one id. */
interface ReceiverRecords {
  readonly operationId: string;
  /** One line in the receiver log, time-stamped. */
  readonly log: (message: string) => Promise<void>;
  /** One audit record, under this request's operation id unless `id` says otherwise. */
  readonly audit: (record: ReceiverAuditRecord, id?: string | null) => Promise<void>;
}

function receiverRecords(options: ReceiverOptions): ReceiverRecords {
  const now = options.now ?? (() => new Date());
  const client = receiverClient(options.keyFingerprint);
  const operationId = newOperationId();
  const clock = { ...systemClock, now };
  return {
    operationId,
    log: (message) => appendReceiverLog(options.home, `${now().toISOString()} ${message}`),
    audit: async (record, id = operationId) => {
      await appendAuditRecords(
        options.home,
        [{ operationId: id, client, paths: [], files: [], ...record }],
        clock,
      );
    },
  };
}

/** Refuses a request that is not exactly one verb (exit 2): logged and audited if they can be. */
async function refuseRequest(
  request: string | undefined,
  records: ReceiverRecords,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  // Refused whatever happens to the log line: a failure to log never lets a request through.
  let logged = true;
  await records.log(`refused request ${quoteRequest(request)}`).catch(() => {
    logged = false;
  });
  // A refusal is no write: no operation id (retention treats it as it treats counted refusals).
  const audited = await records
    .audit(
      {
        operation: 'receiver-request',
        outcome: 'denied',
        code: 'USAGE',
        detail: `refused request ${quoteRequest(request)}`,
      },
      null,
    )
    .then(
      () => true,
      () => false,
    );
  stderr.write(
    `fleet bootstrap receive: refused request ${quoteRequest(request)}: the request must be exactly one of ${RECOVERY_VERBS.join(', ')}\n` +
      `usage: ssh <node> ${RECOVERY_VERBS.join('|')} (this key runs only the fleet receiver)\n` +
      (logged ? '' : 'warning: the receiver log could not be written\n') +
      (audited ? '' : 'warning: the audit log could not be written\n'),
  );
  return 2;
}

/**
 * Runs the verb's handler and logs how it finished; a failure is logged, its code written for the
 * operator (parseReceiverAnswer) and thrown again.
 */
async function runHandler(
  handler: ReceiverHandler,
  context: ReceiverContext,
  verb: string,
): Promise<number> {
  try {
    const exitCode = await handler(context);
    await context.log(`finished ${quoteRequest(verb)} exit ${exitCode}`).catch(() => undefined);
    return exitCode;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    await context
      .log(`failed ${quoteRequest(verb)}: ${typeof code === 'string' ? code : 'INTERNAL'}`)
      .catch(() => undefined);
    // The node's own code for the operator (parseReceiverAnswer), before the human lines.
    context.stderr.write(
      `${RECEIVER_ERROR_PREFIX}${JSON.stringify({
        code: typeof code === 'string' ? code : 'INTERNAL',
        message: (error as Error).message,
      })}\n`,
    );
    throw error;
  }
}
