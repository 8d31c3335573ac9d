/**
 * Errors as data. Every failure fleet reports has a stable `code`, the CLI exit code of contract §7
 * and, for failures that cross the controller's wire, an HTTP status (reliability catalogue §2).
 *
 * Errors cross the plugin boundary: a user-installed plugin has its own copy of this module, so
 * recognising an error never relies on `instanceof`. {@link isFleetError} checks a registered
 * symbol brand and the shape instead.
 *
 * One file, long as it is: {@link ERROR_CODES} is the one catalogue of error codes, read whole, so
 * each code's exit code and HTTP status are decided beside every other's.
 */

import type { ActionOutcome } from './interfaces/action-outcome.js';

/** The stable exit codes of contract §7. */
export const ExitCode = {
  ok: 0,
  drift: 1,
  usage: 2,
  conflict: 3,
  auth: 4,
  unreachable: 5,
  verification: 6,
  policy: 7,
  /** An unexpected failure (a bug): 1, as Node and oclif use it; the JSON envelope says INTERNAL. */
  internal: 1,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * How urgent each exit code is when a verb over many hosts ends (contract §7), most urgent first:
 * 4 (some host refused the credentials), 5 (some host unreachable), a failed verification (6:
 * the operator must act on that node), a conflict (3: something moved), a policy refusal (7), a
 * usage error (2), and only then 1 (drift found) and 0. Each host's entry keeps its own state; this only picks the
 * process's exit code.
 */
const EXIT_URGENCY: readonly number[] = [
  ExitCode.auth,
  ExitCode.unreachable,
  ExitCode.verification,
  ExitCode.conflict,
  ExitCode.policy,
  ExitCode.usage,
  ExitCode.drift,
  ExitCode.ok,
];

/**
 * The exit code of a verb over many hosts: the most urgent of the hosts' own codes (contract §7;
 * 0 for none). A code outside the table (a bug's 1 is `drift`'s 1) ranks as 1.
 */
export function mostUrgentExit(codes: Iterable<number>): number {
  let best = ExitCode.ok as number;
  const rank = (code: number) => {
    const at = EXIT_URGENCY.indexOf(code);
    return at === -1 ? EXIT_URGENCY.indexOf(ExitCode.drift) : at;
  };
  for (const code of codes) if (rank(code) < rank(best)) best = code;
  return best;
}

interface CodeSpec {
  readonly exit: ExitCode;
  /** HTTP status when the controller answers with this code. */
  readonly http?: number;
}

/**
 * Every stable error code, with its exit code and (for wire errors) HTTP status. The wire codes
 * are the controller vocabulary of the reliability catalogue; the others are operator-side.
 */
export const ERROR_CODES = {
  // usage and validation (exit 2)
  USAGE: { exit: ExitCode.usage },
  REPO_NOT_FOUND: { exit: ExitCode.usage },
  REPO_INVALID: { exit: ExitCode.usage },
  FLEET_YAML_INVALID: { exit: ExitCode.usage },
  HOST_FILE_INVALID: { exit: ExitCode.usage },
  UNKNOWN_HOST: { exit: ExitCode.usage },
  UNKNOWN_DOMAIN: { exit: ExitCode.usage, http: 404 },
  RENDER_FAILED: { exit: ExitCode.usage },
  CANONICAL_MISSING: { exit: ExitCode.usage },
  /** A repository-declared file (the files domain) whose path another domain owns (contract §10.4). */
  FILES_PATH_OWNED: { exit: ExitCode.usage },
  /** `domains/files/files.yaml` (or another domain's repository manifest) does not validate. */
  FILES_MANIFEST_INVALID: { exit: ExitCode.usage },
  /**
   * A runtime artifact's provenance does not check (contract §1.8): fleet.yaml's `commit` differs
   * from the commit the artifact records, or the artifact records none.
   */
  ARTIFACT_PROVENANCE: { exit: ExitCode.usage },
  /**
   * A runtime artifact does not carry a plugin fleet.yaml names, or carries another version or
   * tarball of it (contract §10.5): installing it would leave the node without the plugin.
   */
  ARTIFACT_PLUGINS: { exit: ExitCode.usage },
  INIT_TARGET_NOT_EMPTY: { exit: ExitCode.usage },
  CREDENTIALS_INVALID: { exit: ExitCode.usage },
  ENV_FILE_INVALID: { exit: ExitCode.usage },
  BAD_REQUEST: { exit: ExitCode.usage, http: 400 },
  PATH_INVALID: { exit: ExitCode.usage, http: 400 },
  CLOCK_SKEW: { exit: ExitCode.usage, http: 400 },
  OP_UNKNOWN: { exit: ExitCode.usage, http: 404 },
  REQUEST_TOO_LARGE: { exit: ExitCode.usage, http: 413 },
  FILE_TOO_LARGE: { exit: ExitCode.policy, http: 413 },
  REQUEST_TIMEOUT: { exit: ExitCode.unreachable, http: 408 },
  FORMAT_UNSUPPORTED: { exit: ExitCode.policy, http: 415 },
  ENCODING_INVALID: { exit: ExitCode.policy, http: 422 },
  SECRET_MISSING: { exit: ExitCode.usage, http: 422 },
  FILE_NOT_FOUND: { exit: ExitCode.usage, http: 404 },
  OPERATION_NOT_FOUND: { exit: ExitCode.usage, http: 404 },
  /** The node has no policy file (`~/.config/fleet/node-policy.yaml`): it does not start. */
  NODE_POLICY_MISSING: { exit: ExitCode.usage, http: 503 },
  /** The node policy does not parse or validate (file, line, field); nothing is served by it. */
  NODE_POLICY_INVALID: { exit: ExitCode.usage, http: 503 },
  /** The node policy is readable by group or others, or not owned by the controller's user. */
  NODE_POLICY_INSECURE: { exit: ExitCode.usage, http: 503 },
  /**
   * The node policy's `supervisor` and the adapter's record (`supervisor.json`) name different
   * supervisors: the controller does not start, no coupled restart runs (contract §12).
   */
  SUPERVISOR_MISMATCH: { exit: ExitCode.usage, http: 503 },
  /** No token with that id in the node's store (token administration, contract §5). */
  TOKEN_NOT_FOUND: { exit: ExitCode.usage, http: 404 },
  /**
   * The resident operator process cannot run here (docs/resident.md): its socket directory is not
   * this user's alone (named, with why), or the platform has no Unix sockets for it (Windows).
   */
  RESIDENT_REFUSED: { exit: ExitCode.usage },
  // plugin loading
  PLUGIN_REFUSED: { exit: ExitCode.usage },
  PLUGIN_API_MISMATCH: { exit: ExitCode.usage },
  DOMAIN_BEHAVIOUR_ABSENT: { exit: ExitCode.usage, http: 501 },
  // conflicts (exit 3)
  PRECONDITION_FAILED: { exit: ExitCode.conflict, http: 412 },
  LOCKED: { exit: ExitCode.conflict, http: 423 },
  PLAN_MISMATCH: { exit: ExitCode.conflict, http: 409 },
  REPLAY_REJECTED: { exit: ExitCode.conflict, http: 409 },
  /** Nothing to roll back to: a precondition, not a failed verification (contract §7). */
  NO_PRIOR_GENERATION: { exit: ExitCode.conflict },
  /**
   * A stage without the artifact's bytes names a generation the node does not hold verified: the
   * operator uploads instead (contract §12).
   */
  GENERATION_NOT_HELD: { exit: ExitCode.conflict, http: 412 },
  /** The repository has uncommitted changes where fleet would write (adopt). */
  REPO_DIRTY: { exit: ExitCode.conflict },
  /**
   * The service manager (`systemctl --user`, `launchctl`, `schtasks`) refused a command or could
   * not be reached, and what the verb wrote was removed again: nothing changed, so not a failed
   * verification (contract §7: 6 is only for those) — a precondition of the seat that does not hold.
   */
  SUPERVISOR_FAILED: { exit: ExitCode.conflict, http: 500 },
  /** A runtime transaction failed before anything was activated: the node runs what it ran. */
  RUNTIME_NOT_ACTIVATED: { exit: ExitCode.conflict },
  // authentication (exit 4)
  AUTH_REQUIRED: { exit: ExitCode.auth, http: 401 },
  AUTH_INVALID: { exit: ExitCode.auth, http: 401 },
  AUTH_EXPIRED: { exit: ExitCode.auth, http: 401 },
  AUTH_REVOKED: { exit: ExitCode.auth, http: 401 },
  SCOPE_DENIED: { exit: ExitCode.auth, http: 403 },
  ORIGIN_REJECTED: { exit: ExitCode.auth, http: 403 },
  CREDENTIALS_MISSING: { exit: ExitCode.auth },
  CREDENTIALS_INSECURE: { exit: ExitCode.auth },
  TLS_FINGERPRINT_MISMATCH: { exit: ExitCode.auth },
  // reachability (exit 5)
  HOST_UNREACHABLE: { exit: ExitCode.unreachable },
  /** Client and node speak different wire protocol versions (the message names both). */
  PROTOCOL_MISMATCH: { exit: ExitCode.unreachable, http: 400 },
  // A controller answered, but not in this client's protocol: the host cannot be used (exit 5).
  RESPONSE_INVALID: { exit: ExitCode.unreachable },
  /**
   * The node's runtime predates a field this entry needs (a byte-exact source's `bytes`, contract
   * §10.4): the entry cannot be checked or installed there until the node is upgraded; the host's
   * other entries are still served. Said by the operator from the node's own refusal.
   */
  NODE_OUTDATED: { exit: ExitCode.unreachable },
  OVERLOADED: { exit: ExitCode.unreachable, http: 503 },
  // verification (exit 6)
  VERIFICATION_FAILED: { exit: ExitCode.verification },
  ACTION_FAILED: { exit: ExitCode.verification, http: 500 },
  ROLLED_BACK: { exit: ExitCode.verification, http: 200 },
  ACCEPTANCE_FAILED: { exit: ExitCode.verification },
  RECOVERY_REQUIRED: { exit: ExitCode.verification, http: 503 },
  /**
   * The runtime runner died before its transaction ended, the controller answering throughout
   * (issue 36): the operator resumes it (`fleet upgrade HOST --resume`) or rolls it back.
   */
  RUNNER_DIED: { exit: ExitCode.verification },
  GENERATION_INVALID: { exit: ExitCode.verification },
  /** The controller's --node-id disagrees with expected_node of the identity file: it will not serve. */
  NODE_ID_MISMATCH: { exit: ExitCode.verification },
  // policy (exit 7)
  /** A file with lines found in no known version (local edits), written only with --force. */
  DIVERGED: { exit: ExitCode.policy },
  /** A file whose every line is known but whose whole is not (a hand change), only with --force. */
  MODIFIED: { exit: ExitCode.policy },
  /** A file fleet installed that someone removed: recreated only with --force. */
  DELETED: { exit: ExitCode.policy },
  /** `adopt --promote` would leave other hosts rendering differently from their live files. */
  PROMOTE_REFUSED: { exit: ExitCode.policy },
  /** `--unattended` without the domain's opt-in, or for a domain with a process coupling (§10.3). */
  UNATTENDED_REFUSED: { exit: ExitCode.policy },
  /** The node's local bootstrap policy does not allow this bootstrap (contract §12). */
  BOOTSTRAP_REFUSED: { exit: ExitCode.policy, http: 403 },
  /**
   * A runtime change (a stage of an upgrade or a bootstrap) without a release signature, on a node
   * whose policy does not say `runtime.allowUnsigned: true` (ADR 0019): nothing staged.
   */
  ARTIFACT_UNSIGNED: { exit: ExitCode.policy, http: 403 },
  /**
   * A release signature that does not verify against the node policy's `runtime.trustedKeys`
   * (another namespace, an untrusted or non-Ed25519 key, changed bytes, not a signature; ADR
   * 0019): nothing staged.
   */
  SIGNATURE_INVALID: { exit: ExitCode.policy, http: 403 },
  SECRET_FOUND: { exit: ExitCode.policy },
  /**
   * A secret a file uses has a value shorter than the redaction floor (8 characters, contract §4):
   * refused at resolve time with the secret's name, nothing written.
   */
  SECRET_TOO_SHORT: { exit: ExitCode.policy, http: 422 },
  /**
   * The live file's owner or setuid/setgid bits would not survive the replace (another user's
   * file, or a set-id file): refused before anything is written (catalogue 13).
   */
  FILE_ATTRIBUTES_REFUSED: { exit: ExitCode.policy, http: 409 },
  /** The node does not serve the domain (not in its node policy, or no plugin provides it). */
  DOMAIN_NOT_SERVED: { exit: ExitCode.policy, http: 403 },
  /** An action, a path or an unattended install the node policy does not allow (contract §5.1). */
  POLICY_REFUSED: { exit: ExitCode.policy, http: 403 },
  PATH_OUTSIDE_ROOT: { exit: ExitCode.policy, http: 403 },
  /** A node path that is not a managed file of the host (adopt, export). */
  PATH_NOT_MANAGED: { exit: ExitCode.policy, http: 403 },
  SYMLINK_REFUSED: { exit: ExitCode.policy, http: 409 },
  NOT_REGULAR_FILE: { exit: ExitCode.policy, http: 409 },
  /**
   * A managed file with other hard links (catalogue 16): its content is also another file's, so
   * the node does not read it out (drift: `unsupported`); an install breaks the link and says so.
   */
  HARDLINK_REFUSED: { exit: ExitCode.policy, http: 409 },
  MARKERS_UNPAIRED: { exit: ExitCode.policy, http: 409 },
  MARKERS_DUPLICATE: { exit: ExitCode.policy, http: 409 },
  MARKERS_REVERSED: { exit: ExitCode.policy, http: 409 },
  MARKER_IN_BODY: { exit: ExitCode.policy, http: 409 },
  BLOCK_DRIFT: { exit: ExitCode.policy, http: 409 },
  HOSTKEY_UNKNOWN: { exit: ExitCode.policy },
  HOSTKEY_MISMATCH: { exit: ExitCode.policy },
  /**
   * The SSH recovery receiver's sshd lets a session's environment in (`PermitUserEnvironment`
   * other than `no`, or `AcceptEnv` matching `PATH`, `NODE_OPTIONS`, …), or that cannot be told.
   */
  SSH_ENVIRONMENT_UNSAFE: { exit: ExitCode.policy },
  // server-side failures (reported as verification failures: the node did not do what was asked)
  IO_NOSPACE: { exit: ExitCode.verification, http: 507 },
  IO_ERROR: { exit: ExitCode.verification, http: 500 },
  DURABILITY_FAILED: { exit: ExitCode.verification, http: 500 },
  AUDIT_UNAVAILABLE: { exit: ExitCode.verification, http: 503 },
  INTERNAL: { exit: ExitCode.internal, http: 500 },
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

const BRAND = Symbol.for('fleet.error');

/** One problem among several (validation reports many at once). */
export interface Problem {
  /** File the problem is in, relative to the repo when it is a repo file. */
  readonly file?: string;
  /** 1-based line, when known. */
  readonly line?: number;
  /** Field path inside the file, dotted (`hosts.alpha.platform`). */
  readonly path?: string;
  readonly message: string;
}

export interface FleetErrorOptions {
  readonly problems?: readonly Problem[];
  readonly suggestions?: readonly string[];
  readonly cause?: unknown;
  /**
   * The coupled actions that ran before an installer's node half failed, in order: the controller
   * puts them in the failed operation's receipt (contract §6, `NodeInstallResult.actions`).
   */
  readonly actions?: readonly ActionOutcome[];
  /**
   * What a refused or failed coupled action printed, as the operator is shown it under the error:
   * the last lines of its output, bounded, redacted on the node, and only where the node policy
   * returns the action's output (`ACTION_FAILED`, core `outputTail`; contract §7.1).
   */
  readonly toolOutput?: string;
}

/** The base of every error fleet raises on purpose. */
export class FleetError extends Error {
  readonly [BRAND] = true;
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly problems: readonly Problem[];
  readonly suggestions: readonly string[];
  /** The coupled actions that ran before the failure (`[]` for none); see {@link FleetErrorOptions}. */
  readonly actions: readonly ActionOutcome[];
  /** The output tail of the action that failed, if any; see {@link FleetErrorOptions}. */
  readonly toolOutput: string | undefined;

  constructor(code: ErrorCode, message: string, options: FleetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FleetError';
    this.code = code;
    this.exitCode = ERROR_CODES[code].exit;
    this.problems = options.problems ?? [];
    this.suggestions = options.suggestions ?? [];
    this.actions = options.actions ?? [];
    this.toolOutput = options.toolOutput;
  }

  /** The stable JSON envelope of contract §2: `{ error: { code, message, exitCode } }`. */
  toEnvelope(): ErrorEnvelope {
    return errorEnvelope(this);
  }
}

/**
 * `PRECONDITION_FAILED` for one file: the live file's sha256 is not the one the plan was made
 * against (`null`: the file does not exist), so nothing was written. The controller answers both
 * fields on the wire (contract §5) so the operator can re-plan against the live file.
 */
export class PreconditionFailedError extends FleetError {
  readonly path: string;
  readonly liveSha256: string | null;

  constructor(path: string, liveSha256: string | null, why = '') {
    super(
      'PRECONDITION_FAILED',
      `${path}${why ? ` ${why}` : ''}: live sha256 is ${liveSha256 ?? 'absent (no such file)'}, not the one planned against; nothing written`,
      { suggestions: ['re-plan against the live file'] },
    );
    this.path = path;
    this.liveSha256 = liveSha256;
  }
}

export interface ErrorEnvelope {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly exitCode: number;
    readonly problems?: readonly Problem[];
    readonly suggestions?: readonly string[];
    /** The output tail of a refused or failed action (`ACTION_FAILED`), when the node returned it. */
    readonly toolOutput?: string;
  };
}

/** The structural view of a fleet error, as it may arrive from another copy of this module. */
export interface FleetErrorLike {
  readonly code: ErrorCode;
  readonly message: string;
  readonly exitCode: ExitCode;
  readonly problems?: readonly Problem[];
  readonly suggestions?: readonly string[];
  /** Absent in errors from a copy of core older than the field. */
  readonly actions?: readonly ActionOutcome[];
  /** The output tail of a refused or failed action; absent too from an older copy of core. */
  readonly toolOutput?: string | undefined;
}

/** True for a fleet error from any copy of `@fleet/core` (no `instanceof`). */
export function isFleetError(value: unknown): value is FleetErrorLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<PropertyKey, unknown>;
  return (
    candidate[BRAND] === true &&
    typeof candidate['code'] === 'string' &&
    Object.hasOwn(ERROR_CODES, candidate['code']) &&
    typeof candidate['exitCode'] === 'number'
  );
}

export function errorEnvelope(error: FleetErrorLike): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      exitCode: error.exitCode,
      ...(error.problems && error.problems.length > 0 ? { problems: error.problems } : {}),
      ...(error.suggestions && error.suggestions.length > 0
        ? { suggestions: error.suggestions }
        : {}),
      ...(error.toolOutput ? { toolOutput: error.toolOutput } : {}),
    },
  };
}

/** `file:line: path: message`, the one-line form every problem is printed in. */
export function formatProblem(problem: Problem): string {
  const where = [problem.file, problem.line === undefined ? undefined : String(problem.line)]
    .filter((part): part is string => part !== undefined)
    .join(':');
  const field = problem.path ? `${problem.path}: ` : '';
  return `${where ? `${where}: ` : ''}${field}${problem.message}`;
}

/** The exit code and HTTP status that belong to a code. */
export function describeCode(code: ErrorCode): { exitCode: ExitCode; http: number | undefined } {
  const spec: CodeSpec = ERROR_CODES[code];
  return { exitCode: spec.exit, http: spec.http };
}

/** An argument oclif reports missing: its name and description, as the command declares them. */
export interface MissingArg {
  readonly name?: string;
  readonly description?: string;
}

/**
 * The one-line message of a command-line parse error (contract §7: one line, and the JSON message
 * complete). oclif's text is a headline, an indented line per problem or missing argument and a
 * "See more help" line; a missing argument is named with its description (`Missing 1 required
 * arg: path — the file, ~/-relative`), other problems are kept, joined by `; `.
 */
export function usageErrorMessage(message: string, missing?: readonly MissingArg[]): string {
  const named = (missing ?? []).filter((arg) => arg.name !== undefined && arg.name !== '');
  if (named.length > 0) {
    const list = named
      .map((arg) => (arg.description ? `${arg.name} — ${arg.description}` : `${arg.name}`))
      .join('; ');
    return `Missing ${named.length} required arg${named.length === 1 ? '' : 's'}: ${list}`;
  }
  const lines = message
    .split('\n')
    .map((line) => line.replace(/^Error: /, '').trim())
    .filter(
      (line) =>
        line !== '' &&
        !/^The following errors occurred:?$/.test(line) &&
        !/^See more help/.test(line),
    );
  return lines.length > 0 ? lines.join('; ') : 'usage error';
}
