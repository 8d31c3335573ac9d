/**
 * The operator's own log of the verbs it ran (contract §5): JSON lines at
 * `$XDG_STATE_HOME/fleet/operator.jsonl` (default `~/.local/state/fleet/operator.jsonl`), mode
 * 0600 in a 0700 directory, one line per host operation, keyed by the same operation id the node's
 * audit record carries — so either side's record can be checked against the other's.
 *
 * Never a token or a secret value: the record is a closed shape (no free-form fields a caller
 * could put a token into), and the one free-text field is scrubbed of bearer tokens and of any
 * value the caller names as secret.
 */
import { mkdir, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { commitIdSchema, operationIdSchema, timestampSchema } from '../wire/protocol.js';

export const OPERATOR_LOG_FILE = 'operator.jsonl';
const MAX_DETAIL = 500;

export const operatorLogRecordSchema = z.lazy(() =>
  z.strictObject({
    ts: timestampSchema,
    /** The verb as typed, without its flags' values (`config install`). */
    verb: z.string().min(1).max(100),
    host: z.string().nullable(),
    operationId: operationIdSchema.nullable(),
    domain: z.string().nullable(),
    /**
     * The fleet repository commit the verb read its content at (contract §8.4: for an install,
     * what it rendered from — the commit its request, receipt and node audit record name; for an
     * adopt, the commit it read before it committed); `null` for a verb that read none.
     */
    repoCommit: commitIdSchema.nullable(),
    paths: z.array(z.string()),
    outcome: z.enum(['ok', 'unchanged', 'failed', 'refused', 'unreachable', 'planned']),
    code: z.string().nullable(),
    exitCode: z.number().int().nonnegative(),
    detail: z.string().max(MAX_DETAIL),
  }),
);
export type OperatorLogRecord = z.infer<typeof operatorLogRecordSchema>;

export interface OperatorVerb {
  readonly verb: string;
  readonly host?: string | null;
  readonly operationId?: string | null;
  readonly domain?: string | null;
  /** The commit the verb's content came from (a full commit id); absent or `null`: none. */
  readonly repoCommit?: string | null;
  readonly paths?: readonly string[];
  readonly outcome: OperatorLogRecord['outcome'];
  readonly code?: string | null;
  readonly exitCode?: number;
  readonly detail?: string;
}

export interface OperatorLogOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
  readonly now?: () => Date;
  /** Values that must never reach the log (the tokens in play); replaced wherever they appear. */
  readonly secrets?: readonly string[];
}

/** `$XDG_STATE_HOME/fleet` (an absolute XDG_STATE_HOME only, as the XDG spec says), else `~/.local/state/fleet`. */
export function operatorStateDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  const xdg = env['XDG_STATE_HOME'];
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, '.local', 'state'), 'fleet');
}

export function operatorLogPath(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  return join(operatorStateDir(env, home), OPERATOR_LOG_FILE);
}

/** Removes what must never be logged from free text. */
export function scrubDetail(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/\b(bearer)\s+[^\s"']+/gi, '$1 [redacted]');
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out.length > MAX_DETAIL ? `${out.slice(0, MAX_DETAIL - 1)}…` : out;
}

/** Builds the validated record of one verb (exported for tests and for callers that batch). */
export function operatorLogRecord(
  entry: OperatorVerb,
  options: OperatorLogOptions = {},
): OperatorLogRecord {
  const secrets = options.secrets ?? [];
  return operatorLogRecordSchema.parse({
    ts: (options.now?.() ?? new Date()).toISOString(),
    verb: entry.verb,
    host: entry.host ?? null,
    operationId: entry.operationId ?? null,
    domain: entry.domain ?? null,
    repoCommit: entry.repoCommit ?? null,
    paths: [...(entry.paths ?? [])].map((path) => scrubDetail(path, secrets)),
    outcome: entry.outcome,
    code: entry.code ?? null,
    exitCode: entry.exitCode ?? 0,
    detail: scrubDetail(entry.detail ?? '', secrets),
  });
}

/**
 * Appends one line per entry to the operator log, creating it 0600 (and narrowing a file found
 * wider: the log names hosts, paths and operations). One `write` per call, in append mode, so
 * concurrent verbs interleave whole lines. Returns the log's path.
 */
export async function recordOperatorVerb(
  entries: OperatorVerb | readonly OperatorVerb[],
  options: OperatorLogOptions = {},
): Promise<string> {
  const list = Array.isArray(entries)
    ? (entries as readonly OperatorVerb[])
    : [entries as OperatorVerb];
  const env = options.env ?? process.env;
  const dir = operatorStateDir(env, options.home ?? homedir());
  const path = join(dir, OPERATOR_LOG_FILE);
  if (list.length === 0) return path;
  const text = list
    .map((entry) => `${JSON.stringify(operatorLogRecord(entry, options))}\n`)
    .join('');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const handle = await open(path, 'a', 0o600);
  try {
    const stats = await handle.stat();
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) await handle.chmod(0o600);
    await handle.write(text);
  } finally {
    await handle.close();
  }
  return path;
}
