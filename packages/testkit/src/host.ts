import { chmod, lstat, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  ENV_DIR,
  ENV_FILE,
  FleetError,
  NODE_POLICY_PATH,
  NODE_POLICY_VERSION,
  formatNodePolicy,
  loadEnvChain,
  nodePolicySchema,
  parseHomePath,
  policyActionRunner,
  type ActionRun,
  type ControllerSupervisor,
  type NodeContext,
  type NodePolicy,
  type NodePolicyInput,
  type Platform,
  type SafeFileReader,
  type SecretValues,
} from '@fleet/core';
import { FixedClock } from './clock.js';
import { RecordedProcessRunner } from './processes.js';
import { TempHomeWriter, type TempHomeWriterOptions, type WriterDomain } from './writer.js';

/** How {@link createFakeHost} sets a host up; every field has a default. */
export interface FakeHostOptions {
  /** The node id (default `node-01`). */
  readonly nodeId?: string;
  /** The platform the domain sees (default `linux`; the files are still this machine's). */
  readonly platform?: Platform;
  /** Start of the fixed clock. */
  readonly now?: Date | string;
  /** Values for `~/.config/fleet/env` (the first file of the env-file chain). */
  readonly secrets?: Readonly<Record<string, string>>;
  /**
   * The host's node policy (`~/.config/fleet/node-policy.yaml`, written 0600): the domains it
   * serves, their per-host path overrides, their coupled actions, `symlinkInto`… `version` may
   * be left out. Without one, writers serve their own domain at its declared paths and no
   * action can run. See README.md, "A node policy".
   */
  readonly policy?: Omit<NodePolicyInput, 'version'> & { readonly version?: 1 };
}

/**
 * A fake host for domain plugin tests: a real temporary directory as the node's home (so the
 * domain's real file code runs), a {@link RecordedProcessRunner}, a {@link FixedClock}, and the
 * env-file chain written as real files and read by the same loader the controller uses.
 */
export class FakeHost implements NodeContext {
  readonly platform: Platform;
  readonly nodeId: string;
  /** A clock that moves only when the test moves it. */
  readonly clock: FixedClock;
  /** Records every command the domain runs; script answers with `on(…)`. */
  readonly processes = new RecordedProcessRunner();
  /** Every node policy action run through {@link FakeHost.forDomain} contexts, in order. */
  readonly actionRuns: ActionRun[] = [];
  /** The node policy, as validated (`undefined`: none given). */
  policy: NodePolicy | undefined;

  private constructor(
    /** The temporary directory standing for the node's `~`. */
    readonly home: string,
    options: FakeHostOptions,
  ) {
    this.platform = options.platform ?? 'linux';
    this.nodeId = options.nodeId ?? 'node-01';
    this.clock = new FixedClock(options.now);
  }

  /** Makes the temporary home (and the env file, when `secrets` are given). */
  static async create(options: FakeHostOptions = {}): Promise<FakeHost> {
    const home = await mkdtemp(join(tmpdir(), 'fleet-fakehost-'));
    const host = new FakeHost(home, options);
    if (options.secrets) await host.writeEnvFile(ENV_FILE, options.secrets);
    if (options.policy) await host.setPolicy(options.policy);
    return host;
  }

  /**
   * Writes (or replaces) the host's node policy file, mode 0600, as `fleet node-policy init` or
   * the node's owner would; writers and {@link FakeHost.forDomain} contexts made afterwards use it.
   */
  async setPolicy(
    policy: Omit<NodePolicyInput, 'version'> & { readonly version?: 1 },
  ): Promise<void> {
    const input: NodePolicyInput = { version: NODE_POLICY_VERSION, ...policy };
    this.policy = nodePolicySchema.parse(input);
    await this.writeFile(NODE_POLICY_PATH, formatNodePolicy(input), 0o600);
    await chmod(this.resolve(NODE_POLICY_PATH), 0o600);
  }

  /**
   * This host as a domain's install sees it: the same home, processes, clock and secrets, plus
   * `actions` — the node policy's coupled actions of `domain`, run exactly as a controller runs
   * them (core `policyActionRunner`: the policy's argv through {@link FakeHost.processes}, its
   * timeout, its output rule), each recorded in {@link FakeHost.actionRuns}. An id the policy does
   * not define for `domain` is `POLICY_REFUSED`; a domain it does not serve, `DOMAIN_NOT_SERVED`.
   */
  forDomain(domain: string): NodeContext {
    const policy = this.policy;
    if (policy === undefined || !Object.hasOwn(policy.domains, domain)) {
      throw new FleetError(
        'DOMAIN_NOT_SERVED',
        `this fake host's node policy does not serve domain ${domain} (createFakeHost({ policy }))`,
      );
    }
    const actions = policyActionRunner(this.processes, () => this.secrets(), {
      domain,
      home: this.home,
      actions: policy.domains[domain]?.actions ?? {},
      runs: this.actionRuns,
    });
    return {
      home: this.home,
      platform: this.platform,
      nodeId: this.nodeId,
      clock: this.clock,
      processes: this.processes,
      secrets: () => this.secrets(),
      actions,
      ...(this.files ? { files: this.files } : {}),
    };
  }

  /** Absolute path of a `~/`-relative node path (validated like the controller validates it). */
  resolve(path: string): string {
    return join(this.home, ...parseHomePath(path));
  }

  /** Writes a node file as someone at the host's keyboard would (parents created). */
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

  /** A node file as UTF-8 text, or `undefined` when it does not exist. */
  async readText(path: string): Promise<string | undefined> {
    return (await this.readFile(path))?.toString('utf8');
  }

  /** Whether a node path exists (a symlink counts, even a dangling one). */
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

  /**
   * A `SafeFileWriter` over this host's home for `declaration`'s paths, as the controller hands
   * one to a domain's `install`: the controller's own writer (see {@link TempHomeWriter}). The
   * second argument is its options, or just the operation id.
   */
  writer(declaration: WriterDomain, options: TempHomeWriterOptions | string = {}): TempHomeWriter {
    const given = typeof options === 'string' ? { operationId: options } : options;
    return new TempHomeWriter(this.home, declaration, {
      clock: this.clock,
      ...(this.policy ? { policy: this.policy } : {}),
      ...given,
    });
  }

  /**
   * Safe reads for a prober's node half (`NodeContext.files`): set it to a writer of the
   * prober's domain (`host.files = host.writer(declaration)`) before calling `collect(host, …)`.
   */
  files?: SafeFileReader;

  /**
   * The supervisor the node records for its controller (`NodeContext.controllerSupervisor`), as
   * the controller hands it to a domain that restarts the controller: set it, for example to a
   * {@link RecordedSupervisor} (`host.controllerSupervisor = () => Promise.resolve(supervisor)`).
   * Unset: the node records none.
   */
  controllerSupervisor?: () => Promise<ControllerSupervisor | null>;

  /** The env-file chain, read by the controller's own loader. */
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
