/**
 * The resident's per-call isolation (docs/resident.md, issue 41 item 3): every verb it serves, run
 * twice in one resident and once in a process of its own against the same lab, gives the same
 * stdout, stderr and exit code and writes the same files. A call that ran outside its caller's
 * scope (environment, working directory, output), or that saw what the call before it left in the
 * process, gives itself away here by a run in the resident differing from the plain process.
 *
 * One lab of two controllers serves the whole table. Before each run the lab is put back into the
 * same state: a user removed two files fleet wrote on each node (so the verbs have something to
 * report and `apply`/`config install --force` something to write) and the report directory is
 * gone. Every file was installed once before, and each verb runs once in its own process before
 * its three runs: what only a first run writes (the repository's cache, the operator's first
 * record of audit heads, the order of the node's record of fleet's writes) is then there for all
 * three, and what the three write is the verb's own doing.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RESIDENT_VERBS } from '@fleet/resident/place.js';
import { fleet, json, type FleetRun } from '../src/fleet.js';
import { Lab, POLICY, ROUTER } from '../e2e/lab-fixture.js';

/** Each verb the resident serves (`RESIDENT_VERBS`), with the arguments it runs with here. */
const TABLE: { readonly verb: string; readonly argv: readonly string[] }[] = [
  // --json: the human output of drift and apply prints each host as it answers, in no fixed order.
  { verb: 'drift', argv: ['drift', '--json', '--report-dir', 'reports'] },
  { verb: 'status', argv: ['status'] },
  { verb: 'validate', argv: ['validate', '--json'] },
  { verb: 'apply', argv: ['apply', '--confirm', '--force', '--json'] },
  {
    verb: 'config install',
    argv: ['config', 'install', 'node-01', 'harness-policy', '--confirm', '--force'],
  },
  { verb: 'config plan', argv: ['config', 'plan', 'node-02', '--json'] },
  { verb: 'config inventory', argv: ['config', 'inventory', 'node-01'] },
];

/**
 * What must differ between any two calls, in output and in files: the time of the call, the ULIDs
 * of the operations it starts (and the digest of a request, which holds one), and the place of a
 * write in the node's audit chain — an entry's `seq`, the hash before it, a head as `seq:hash` —
 * which every write advances. Nothing else is normalised.
 */
const normalise = (text: string): string =>
  text
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, '<ulid>')
    .replace(/("requestSha256":\s*)"[0-9a-f]{64}"/g, '$1"<request>"')
    .replace(/("seq":\s*)\d+(,\s*"sha256":\s*)"[0-9a-f]{64}"/g, '$1"<seq>"$2"<audit head>"')
    .replace(/("seq":\s*)\d+/g, '$1"<seq>"')
    .replace(/("prev":\s*)"[0-9a-f]{64}"/g, '$1"<audit head>"')
    .replace(/"\d+:[0-9a-f]{64}"/g, '"<audit head>"');

/** Not the calls' doing: the resident's own socket and log, and oclif's directories. */
const NOT_WRITTEN_BY_A_CALL = /^(runtime|oclif-(data|config|cache))(\/|$)/;

type Tree = Map<string, Buffer>;

function readTree(root: string): Tree {
  const tree: Tree = new Map();
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (NOT_WRITTEN_BY_A_CALL.test(child)) continue;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) tree.set(child, readFileSync(join(root, child)));
    }
  };
  walk('');
  return tree;
}

/** `value` as JSON with every object's keys sorted. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${sortedJson(item)}`).join(',')}}`;
}

/** `text` parsed as JSON, or `undefined` when it is not JSON. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A file's bytes, normalised. A verb asks its hosts at once, and what it records of them goes in
 * the order they answer, in any process: JSON's keys are sorted (a whole file's, or each line's
 * where every line is JSON), and a JSON-lines log's lines too.
 */
function canonical(path: string, bytes: Buffer): string {
  const text = normalise(bytes.toString('utf8'));
  const whole = parsed(text);
  if (whole !== undefined) return sortedJson(whole);
  const lines = text.split('\n').filter((line) => line !== '');
  const values = lines.map(parsed);
  if (values.some((value) => value === undefined)) return text;
  const sorted = values.map(sortedJson);
  return (path.endsWith('.jsonl') ? sorted.sort() : sorted).join('\n');
}

const digest = (path: string, bytes: Buffer): string =>
  createHash('sha256').update(canonical(path, bytes)).digest('hex').slice(0, 16);

/** A node's audit log (docs/audit-log.md "Files"). */
const NODE_AUDIT_LOG = /\/\.local\/state\/fleet\/audit(\.\d+)?\.jsonl$/;

/**
 * Of what was appended to `path`, what the call itself wrote. A node writes the reads and refusals
 * it counted (records with an `aggregate`) on its own timer, once a minute (docs/audit-log.md
 * "Reads"), whenever that falls — during any call, or none: those records are the node's doing,
 * not the call's, and are left out. Every other appended line is the call's.
 */
function callsOwn(path: string, appended: Buffer): Buffer {
  if (!NODE_AUDIT_LOG.test(path)) return appended;
  const lines = appended
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .filter((line) => {
      const record = parsed(line);
      return !(typeof record === 'object' && record !== null && 'aggregate' in record);
    });
  return Buffer.from(lines.map((line) => `${line}\n`).join(''));
}

/**
 * What a call wrote, one line per file, sorted: `added|changed|removed path digest`, the digest of
 * its normalised content. Of a log the call appended to (the nodes' audit logs, the operator's
 * log and the audit heads it saw), what it appended: the log holds every earlier call's lines.
 */
function written(before: Tree, after: Tree): string[] {
  const out: string[] = [];
  for (const [path, bytes] of after) {
    const was = before.get(path);
    if (was !== undefined && was.equals(bytes)) continue;
    const appended = was !== undefined && bytes.subarray(0, was.length).equals(was);
    const added = appended ? callsOwn(path, bytes.subarray(was.length)) : bytes;
    if (added.length === 0) continue;
    const what = appended ? `+${digest(path, added)}` : digest(path, added);
    out.push(`${was === undefined ? 'added' : 'changed'} ${normalise(path)} ${what}`);
  }
  for (const path of before.keys()) if (!after.has(path)) out.push(`removed ${normalise(path)}`);
  return out.sort();
}

interface Observed {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly written: string[];
}

describe('integration: the resident runs each verb as a process of its own would', function () {
  this.timeout(120_000);
  let lab: Lab;
  let env: Record<string, string>;
  let cwd: string;

  /** The same starting point for every run (see the file's comment). */
  const prepare = (): void => {
    for (const host of ['node-01', 'node-02']) {
      for (const path of [POLICY, ROUTER]) rmSync(lab.nodePath(host, path), { force: true });
    }
    rmSync(join(cwd, 'reports'), { recursive: true, force: true });
  };

  const observe = async (argv: readonly string[], where: 'resident' | 'own'): Promise<Observed> => {
    prepare();
    const before = readTree(lab.tmp);
    const run: FleetRun = await fleet(argv, {
      cwd,
      env: { ...env, FLEET_RESIDENT: where === 'resident' ? 'manual' : 'off' },
    });
    return {
      exitCode: run.exitCode,
      stdout: normalise(run.stdout),
      stderr: normalise(run.stderr),
      written: written(before, readTree(lab.tmp)),
    };
  };

  const residentCalls = async (): Promise<number> => {
    const status = json<{ running: boolean; calls?: number }>(
      await fleet(['resident', 'status', '--json'], { env }),
    );
    expect(status.running, 'the resident still runs').to.equal(true);
    return status.calls ?? -1;
  };

  before(async function () {
    if (process.platform === 'win32') this.skip(); // no Unix sockets: the resident refuses there
    lab = await Lab.create('fleet-resident-isolation-');
    await lab.up(2);
    env = lab.residentEnv().env;
    cwd = join(lab.tmp, 'work');
    mkdirSync(cwd);
    // Every file installed once: what follows reinstalls what `prepare` removed, as a user's
    // fleet does every day, not a first install.
    const installed = await fleet(['apply', '--confirm'], { cwd, env });
    expect(installed.exitCode, installed.stdout).to.equal(0);
    const started = await fleet(['resident', 'start'], { env });
    expect(started.exitCode, started.stderr).to.equal(0);
  });
  after(async () => {
    if (env) await fleet(['resident', 'stop'], { env });
    await lab?.destroy();
  });

  it('the table holds every verb the resident serves', () => {
    expect(TABLE.map((row) => row.verb)).to.have.members(
      RESIDENT_VERBS.map((verb) => verb.join(' ')),
    );
  });

  for (const { verb, argv } of TABLE) {
    it(`${argv.join(' ')}: twice in the resident, once in its own process`, async () => {
      // What only the verb's first run after another verb writes (records kept in recency order,
      // the operator's first sight of new audit heads) is written here, before the three runs.
      await observe(argv, 'own');
      const calls = await residentCalls();
      const first = await observe(argv, 'resident');
      const second = await observe(argv, 'resident');
      const own = await observe(argv, 'own');
      expect(await residentCalls(), `both ${verb} runs went to the resident`).to.equal(calls + 2);
      expect(first, 'the first run in the resident').to.deep.equal(own);
      expect(second, 'the second run in the resident').to.deep.equal(own);
    });
  }
});
