/**
 * The end-to-end suites' lab: one real lab fleet per test file (`fleet lab up --hosts 3`), the
 * operator's environment that points at it (FLEET_REPO, FLEET_CREDENTIALS, an isolated
 * XDG_STATE_HOME for the operator log), and small helpers to act as the operator (`run`, which
 * records every CLI output for later greps) or as someone at a node's keyboard (plain fs).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createControllerClient, type ControllerClient, type LabDocument } from '@fleet/core';
import { destroyLab, fleet, json, tempDir, type FleetRun } from '../src/fleet.js';

export const POLICY = '~/.claude/CLAUDE.md';
export const AGENTS = '~/.codex/AGENTS.md';
export const GEMINI = '~/.gemini/GEMINI.md';
export const ROUTER = '~/.config/router/router.yaml';
export const TRANSPORT = '~/.config/fleet/transport.yaml';
/** The files domain's example entry, which `fleet lab up` declares (contract §10.4). */
export const FILES_DEMO = '~/.config/fleet-demo/hello.conf';
export const POLICY_CANONICAL = 'domains/harness-policy/CLAUDE.md';
export const ROUTER_CANONICAL = 'domains/router/router.yaml';

export interface Credentials {
  version: 1;
  hosts: Record<string, { token: string }>;
}

export interface RecordedRun extends FleetRun {
  readonly args: readonly string[];
}

export const sha256 = (data: string | Buffer): string =>
  createHash('sha256').update(data).digest('hex');

export class Lab {
  /** Every CLI run through {@link Lab.run}, with its complete stdout and stderr. */
  readonly runs: RecordedRun[] = [];
  document!: LabDocument;
  credentials!: Credentials;

  private constructor(
    /** The test file's temporary directory: the lab, the operator state, reports. */
    readonly tmp: string,
    private readonly cleanupTmp: () => Promise<void>,
  ) {}

  /** The lab directory (`fleet lab up --dir`). */
  get dir(): string {
    return join(this.tmp, 'lab');
  }
  get repo(): string {
    return join(this.dir, 'repo');
  }
  /** The operator's XDG_STATE_HOME (its log goes to `<it>/fleet/operator.jsonl`). */
  get stateHome(): string {
    return join(this.tmp, 'operator-state');
  }
  get operatorLog(): string {
    return join(this.stateHome, 'fleet', 'operator.jsonl');
  }
  get env(): Record<string, string> {
    return {
      FLEET_REPO: this.document.repo,
      FLEET_CREDENTIALS: this.document.credentials,
      XDG_STATE_HOME: this.stateHome,
    };
  }

  /**
   * The lab's env with a runtime directory and oclif directories of its own (made here, 0700):
   * a resident started under it is never the resident of whoever runs the tests.
   */
  residentEnv(): { runtime: string; env: Record<string, string> } {
    const runtime = join(this.tmp, 'runtime');
    mkdirSync(runtime, { mode: 0o700 });
    return {
      runtime,
      env: {
        ...this.env,
        XDG_RUNTIME_DIR: runtime,
        FLEET_DATA_DIR: join(this.tmp, 'oclif-data'),
        FLEET_CONFIG_DIR: join(this.tmp, 'oclif-config'),
        FLEET_CACHE_DIR: join(this.tmp, 'oclif-cache'),
      },
    };
  }

  /** Makes the temp dir; `up()` starts the lab. Split so `after` can always tear down. */
  static async create(prefix: string): Promise<Lab> {
    const tmp = await tempDir(prefix);
    return new Lab(tmp.path, tmp.cleanup);
  }

  /** `fleet lab up --hosts HOSTS` with `flags` (`--no-dev-plugins`: only what runtimes carry). */
  async up(hosts = 3, flags: readonly string[] = []): Promise<void> {
    const run = await fleet(
      ['lab', 'up', '--hosts', String(hosts), '--dir', this.dir, '--json', ...flags],
      { cwd: this.tmp },
    );
    expect(run.exitCode, run.stderr).to.equal(0);
    this.document = json<LabDocument>(run);
    this.credentials = JSON.parse(await readFile(this.document.credentials, 'utf8')) as Credentials;
    await mkdir(this.stateHome, { recursive: true });
  }

  /** Always safe: stops whatever the lab started, then removes the temp dir. */
  async destroy(): Promise<void> {
    await destroyLab(this.dir);
    await this.cleanupTmp();
  }

  /** Runs `fleet ARGS` as the operator (cwd outside the repo, env pointing at the lab). */
  async run(args: readonly string[]): Promise<RecordedRun> {
    const result = await fleet(args, { cwd: this.tmp, env: this.env });
    const recorded = { ...result, args };
    this.runs.push(recorded);
    return recorded;
  }

  host(name: string): LabDocument['hosts'][number] {
    const host = this.document.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`no lab host ${name}`);
    return host;
  }

  home(name: string): string {
    return this.host(name).home;
  }

  /** A node's `~/…` path on disk. */
  nodePath(name: string, path: string): string {
    if (!path.startsWith('~/')) throw new Error(`not a ~/ path: ${path}`);
    return join(this.home(name), ...path.slice(2).split('/'));
  }

  /** Writes a node file as an operator at that host's keyboard would (no fleet involved). */
  async writeNode(name: string, path: string, content: string | Buffer): Promise<void> {
    const file = this.nodePath(name, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }

  async readNode(name: string, path: string): Promise<Buffer> {
    return readFile(this.nodePath(name, path));
  }

  backupsDir(name: string): string {
    return join(this.home(name), '.local', 'state', 'fleet', 'backups');
  }

  auditLog(name: string): string {
    return join(this.home(name), '.local', 'state', 'fleet', 'audit.jsonl');
  }

  git(...args: string[]): string {
    return execFileSync('git', ['-C', this.repo, ...args], { encoding: 'utf8' });
  }

  /** Commit hashes that changed `path`, newest first. */
  versionsOf(path: string): string[] {
    return this.git('log', '--format=%H', '--', path).trim().split('\n').filter(Boolean);
  }

  /** A published version of a canonical file rendered for a host by hand (host variables only). */
  renderAt(commit: string, path: string, name: string): string {
    return this.git('show', `${commit}:${path}`).replace(/\{\{ host\.node_id \}\}/g, name);
  }

  /**
   * The release signature of `artifact` (a file, or its bytes) by the lab's signing key (`fleet lab up` made it, its nodes
   * trust it; ADR 0019): what `fleet lab build` pins as `signature:` — for a test that pins an
   * artifact by hand. The real ssh-keygen signs.
   */
  signature(artifact: string | Buffer): string {
    const armored = execFileSync(
      'ssh-keygen',
      ['-q', '-Y', 'sign', '-f', join(this.dir, 'signing_ed25519'), '-n', 'fleet-release'],
      { input: typeof artifact === 'string' ? readFileSync(artifact) : artifact, encoding: 'utf8' },
    );
    return armored
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('-----'))
      .join('');
  }

  /** Edits a repo file and commits it (the operator's ordinary git work). */
  async commitEdit(path: string, edit: (text: string) => string, message: string): Promise<string> {
    const file = join(this.repo, ...path.split('/'));
    await writeFile(file, edit(await readFile(file, 'utf8')));
    this.git('add', '--', path);
    this.git(
      '-c',
      'user.name=e2e',
      '-c',
      'user.email=e2e@example.invalid',
      'commit',
      '-q',
      '-m',
      message,
    );
    return this.git('rev-parse', 'HEAD').trim();
  }

  client(name: string, timeoutMs = 10_000): ControllerClient {
    const host = this.host(name);
    return createControllerClient({
      host: name,
      url: host.controller,
      token: this.credentials.hosts[name]?.token ?? '',
      timeoutMs,
    });
  }
}

export interface FileStamp {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly sha256: string;
}

/** Every regular file under `dir` (relative path → size, mtime, inode, sha256); `{}` if absent. */
export async function stampTree(
  dir: string,
  skip: (relative: string) => boolean = () => false,
): Promise<Record<string, FileStamp>> {
  const out: Record<string, FileStamp> = {};
  const walk = async (relative: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(dir, relative), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (skip(child)) continue;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) {
        const path = join(dir, child);
        const info = await stat(path);
        out[child] = {
          size: info.size,
          mtimeMs: info.mtimeMs,
          ino: info.ino,
          sha256: sha256(await readFile(path)),
        };
      }
    }
  };
  await walk('');
  return out;
}

/** Every regular file under `dir` whose bytes contain `needle` (absolute paths). */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile() && (await readFile(child)).includes(needle)) found.push(child);
    }
  };
  await walk(dir);
  return found.sort();
}

/** Lines of a JSON-lines file, parsed (`[]` when it does not exist). */
export async function jsonLines<T = Record<string, unknown>>(path: string): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
