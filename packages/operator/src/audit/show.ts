/**
 * `fleet audit show` (contract §5), the service: the records of one audit log, parsed line by line
 * (a line that does not parse is kept, raw, as not a record) — the operator's own log of the verbs
 * it ran, a node home's log on this machine (every kept segment), or each named host's log through
 * its controller (`POST /v1/audit`, the newest `limit` only when asked).
 */
import { realpath, readFile } from 'node:fs/promises';
import * as core from '@fleet/core';
import {
  parseLines,
  readHomeLog,
  readHostLog,
  readHostTail,
  splitLog,
  type ShownRecord,
} from './log.js';

/** Text made safe to print (the command's, pure). */
export { safeValue } from './log.js';

/** A host whose log could not be read, when others were. */
export interface HostReadError {
  readonly host: string;
  readonly code: string;
  readonly message: string;
  readonly exitCode: number;
}

export interface HostsAuditInput {
  readonly root: string;
  readonly hosts: readonly string[];
  /** Only the newest records, per host. */
  readonly limit?: number;
  /** Per host. */
  readonly timeoutMs: number;
}

/**
 * Each host's records, tagged with its host. One host asked for that could not be read throws
 * that failure (its code, its exit code); of several, the unread ones are in `errors`.
 */
export async function readHostsAudit(
  input: HostsAuditInput,
): Promise<{ readonly records: ShownRecord[]; readonly errors: HostReadError[] }> {
  const repo = await core.loadRepo(input.root);
  for (const host of input.hosts) core.hostEntry(repo, host);
  const credentialsPath = core.defaultCredentialsPath(process.env);
  const credentials = await core.loadCredentials(credentialsPath);
  const outcomes = await core.forEachHost(input.hosts, async (host) => {
    const client = core.clientForHost({
      repo,
      host,
      credentials,
      credentialsPath,
      timeoutMs: input.timeoutMs,
    });
    return input.limit === undefined ? readHostLog(client) : readHostTail(client, input.limit);
  });
  const failed = outcomes.filter((o) => !o.ok);
  const only = outcomes.length === 1 ? failed[0] : undefined;
  if (only && !only.ok) {
    const { error } = only;
    throw error instanceof Error
      ? error
      : new core.FleetError(error.code, error.message, {
          problems: error.problems ?? [],
          suggestions: error.suggestions ?? [],
        });
  }
  const records = outcomes.flatMap((o) =>
    o.ok ? parseLines(o.value.lines, o.value.firstLine, { host: o.host }) : [],
  );
  const errors = failed.flatMap((o) =>
    o.ok
      ? []
      : [
          {
            host: o.host,
            code: o.error.code,
            message: o.error.message,
            exitCode: o.error.exitCode,
          },
        ],
  );
  return { records, errors };
}

/** A node home's log, read directly (its real path is what is reported). */
export async function readHomeAudit(input: {
  readonly home: string;
  readonly limit?: number;
}): Promise<{ readonly home: string; readonly path: string; readonly records: ShownRecord[] }> {
  const home = await realpath(input.home);
  const log = await readHomeLog(home);
  // An incomplete last line is shown raw, as not a record.
  const records = newest(
    parseLines(log.torn ? [...log.lines, log.tail] : log.lines, 1),
    input.limit,
  );
  return { home, path: log.path, records };
}

/** The operator's own log (none yet: no records). */
export async function readOperatorAudit(input: {
  readonly limit?: number;
}): Promise<{ readonly path: string; readonly records: ShownRecord[] }> {
  const path = core.operatorLogPath(process.env);
  let text = '';
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { lines, tail } = splitLog(text);
  return {
    path,
    records: newest(parseLines(tail === '' ? lines : [...lines, tail], 1), input.limit),
  };
}

function newest<T>(items: T[], limit: number | undefined): T[] {
  return limit === undefined ? items : items.slice(-limit);
}
