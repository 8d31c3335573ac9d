import { lstat, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  ENV_DIR,
  ENV_FILE,
  loadEnvChain,
  parseHomePath,
  type NodeContext,
  type Platform,
  type SecretValues,
} from '@fleet/core';
import { FixedClock } from './clock.js';
import { RecordedProcessRunner } from './processes.js';

export interface FakeHostOptions {
  readonly nodeId?: string;
  readonly platform?: Platform;
  /** Start of the fixed clock. */
  readonly now?: Date | string;
  /** Values for `~/.config/fleet/env` (the first file of the env-file chain). */
  readonly secrets?: Readonly<Record<string, string>>;
}

/**
 * A fake host for domain plugin tests: a real temporary directory as the node's home (so the
 * domain's real file code runs), a {@link RecordedProcessRunner}, a {@link FixedClock}, and the
 * env-file chain written as real files and read by the same loader the controller uses.
 */
export class FakeHost implements NodeContext {
  readonly platform: Platform;
  readonly nodeId: string;
  readonly clock: FixedClock;
  readonly processes = new RecordedProcessRunner();

  private constructor(
    readonly home: string,
    options: FakeHostOptions,
  ) {
    this.platform = options.platform ?? 'linux';
    this.nodeId = options.nodeId ?? 'node-01';
    this.clock = new FixedClock(options.now);
  }

  static async create(options: FakeHostOptions = {}): Promise<FakeHost> {
    const home = await mkdtemp(join(tmpdir(), 'fleet-fakehost-'));
    const host = new FakeHost(home, options);
    if (options.secrets) await host.writeEnvFile(ENV_FILE, options.secrets);
    return host;
  }

  /** Absolute path of a `~/`-relative node path (validated like the controller validates it). */
  resolve(path: string): string {
    return join(this.home, ...parseHomePath(path));
  }

  async writeFile(path: string, content: string | Uint8Array, mode = 0o600): Promise<void> {
    const absolute = this.resolve(path);
    await mkdir(dirname(absolute), { recursive: true, mode: 0o700 });
    await writeFile(absolute, content, { mode });
  }

  /** Bytes of a node file, or `undefined` when it does not exist. */
  async readFile(path: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.resolve(path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async readText(path: string): Promise<string | undefined> {
    return (await this.readFile(path))?.toString('utf8');
  }

  async exists(path: string): Promise<boolean> {
    try {
      await lstat(this.resolve(path));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Writes one file of the env-file chain: `ENV_FILE` (`.config/fleet/env`) or a name under
   * `env.d/` (`"20-router.env"`).
   */
  async writeEnvFile(file: string, values: Readonly<Record<string, string>>): Promise<void> {
    const relative = file === ENV_FILE ? ENV_FILE : `${ENV_DIR}/${file}`;
    const text = Object.entries(values)
      .map(([key, value]) => `${key}=${value}\n`)
      .join('');
    await this.writeFile(`~/${relative}`, text);
  }

  secrets(): Promise<SecretValues> {
    return loadEnvChain(this.home);
  }

  /** Removes the temporary home. */
  async dispose(): Promise<void> {
    await rm(this.home, { recursive: true, force: true });
  }
}

/** Shorthand for {@link FakeHost.create}. */
export function createFakeHost(options: FakeHostOptions = {}): Promise<FakeHost> {
  return FakeHost.create(options);
}
