/**
 * The registry of everything the loaded plugins registered: domains (with their installers and
 * adopters), probers and bootstrap adapters, keyed by `Symbol.for()` tokens. It holds only
 * validated plain descriptors, and implementations are loaded lazily, the first time a command
 * needs them.
 *
 * Where the registrations live is a {@link RegistryStore}: the CLI's verbs keep them in the
 * command's tsyringe container, under the tokens (`containerStore` in `@fleet/core/di`,
 * docs/adr/0027-the-registry-lives-in-the-container.md); the controller and plugin commands, which
 * build no container, in a map. Never a container shared with plugins, which may carry their own
 * copy of core.
 */
import { FleetError } from '../errors.js';
import type { Adopter } from '../interfaces/adopter.js';
import type { BootstrapAdapter, SupervisorKind } from '../interfaces/bootstrap.js';
import type { Installer } from '../interfaces/installer.js';
import type { Prober } from '../interfaces/prober.js';
import type {
  AdopterDescriptor,
  BootstrapAdapterDescriptor,
  InstallerDescriptor,
  Loader,
  ProberDescriptor,
} from '../interfaces/registration.js';
import type { PluginRef } from '../interfaces/registration.js';
import type { AcceptedRegistration, RegistryProblem } from './assemble.js';
import { compareCodeUnits } from '../compare.js';

/** Registry tokens: `Symbol.for` so that any copy of this module names the same token. */
export const REGISTRY_TOKENS = {
  domain: Symbol.for('fleet.registry.domain'),
  adopter: Symbol.for('fleet.registry.adopter'),
  prober: Symbol.for('fleet.registry.prober'),
  bootstrapAdapter: Symbol.for('fleet.registry.bootstrap-adapter'),
} as const;

/** A descriptor with the plugin it came from. */
export interface Registered<D> {
  /** The plugin that registered it. */
  readonly plugin: PluginRef;
  /** The validated, plain descriptor. */
  readonly descriptor: D;
}

/**
 * Where a registry keeps its registrations: each token's entries, added in the order the plugins
 * were accepted and listed back in that order. Read once per token, the first time it is asked
 * for: what is added to a store after that is not seen by the registry built on it.
 */
export interface RegistryStore {
  /** Adds one registration under a token. */
  add(token: symbol, entry: Registered<unknown>): void;
  /** A token's registrations, in the order they were added; none: an empty list. */
  list(token: symbol): readonly Registered<unknown>[];
}

/** The store of a registry built without a container: a map from token to entries. */
export function mapStore(): RegistryStore {
  const entries = new Map<symbol, Registered<unknown>[]>();
  return {
    add(token, entry) {
      const list = entries.get(token) ?? [];
      list.push(entry);
      entries.set(token, list);
    },
    list: (token) => entries.get(token) ?? [],
  };
}

const byKey =
  <D>(key: (d: D) => string) =>
  (a: Registered<D>, b: Registered<D>): number =>
    compareCodeUnits(key(a.descriptor), key(b.descriptor));

/**
 * The assembled registry the CLI and the controller work from. Plugins never construct one: the
 * host does, from {@link assembleRegistrations} (tests: `registryFromHooks` in `@fleet/testkit`).
 */
export class Registry {
  /** Problems met while assembling the registry, each attributed to its plugin. */
  readonly problems: readonly RegistryProblem[];
  /** Every accepted plugin, in the order it was accepted. */
  readonly plugins: readonly PluginRef[];
  private readonly loaded = new Map<string, Promise<unknown>>();
  /**
   * Each token's registrations, sorted once: the store is filled in the constructor, and a
   * controller asks for them on every request (contract §14).
   */
  private readonly resolved = new Map<symbol, readonly Registered<unknown>[]>();

  /**
   * @param accepted - what {@link assembleRegistrations} accepted, each descriptor added to `store`
   * @param problems - what it refused, each attributed to its plugin
   * @param store - where the registrations live (default: a map); a container's may already hold
   *   entries a test registered under {@link REGISTRY_TOKENS}, which are listed with the plugins'
   */
  constructor(
    accepted: readonly AcceptedRegistration[],
    problems: readonly RegistryProblem[] = [],
    private readonly store: RegistryStore = mapStore(),
  ) {
    this.problems = problems;
    this.plugins = accepted.map(({ plugin }) => plugin);
    for (const { plugin, registration } of accepted) {
      const register = <D>(token: symbol, descriptor: D): void => {
        store.add(token, { plugin, descriptor });
      };
      registration.installers.forEach((d) => register(REGISTRY_TOKENS.domain, d));
      registration.adopters.forEach((d) => register(REGISTRY_TOKENS.adopter, d));
      registration.probers.forEach((d) => register(REGISTRY_TOKENS.prober, d));
      registration.bootstrapAdapters.forEach((d) => register(REGISTRY_TOKENS.bootstrapAdapter, d));
    }
  }

  /** A token's registrations sorted by `key`, a fresh array each call (callers may sort it). */
  private sorted<D>(token: symbol, key: (d: D) => string): Registered<D>[] {
    let found = this.resolved.get(token) as readonly Registered<D>[] | undefined;
    if (found === undefined) {
      const registered = this.store.list(token) as readonly Registered<D>[];
      found = [...registered].sort(byKey(key));
      this.resolved.set(token, found);
    }
    return [...found];
  }

  /** Every registered domain, by name. */
  domains(): Registered<InstallerDescriptor>[] {
    return this.sorted<InstallerDescriptor>(REGISTRY_TOKENS.domain, (d) => d.domain);
  }

  /** One domain; `UNKNOWN_DOMAIN` (exit 2) naming the known ones otherwise. */
  domain(name: string): Registered<InstallerDescriptor> {
    const found = this.domains().find((entry) => entry.descriptor.domain === name);
    if (found) return found;
    const known = this.domains().map((entry) => entry.descriptor.domain);
    throw new FleetError(
      'UNKNOWN_DOMAIN',
      `unknown domain ${JSON.stringify(name)} (registered: ${known.join(', ') || 'none'})`,
      this.refusedHint(),
    );
  }

  /** Every registered adopter, by domain. */
  adopters(): Registered<AdopterDescriptor>[] {
    return this.sorted<AdopterDescriptor>(REGISTRY_TOKENS.adopter, (d) => d.domain);
  }

  /** Every registered prober, by id. */
  probers(): Registered<ProberDescriptor>[] {
    return this.sorted<ProberDescriptor>(REGISTRY_TOKENS.prober, (d) => d.id);
  }

  /** Every registered bootstrap adapter, by supervisor. */
  bootstrapAdapters(): Registered<BootstrapAdapterDescriptor>[] {
    return this.sorted<BootstrapAdapterDescriptor>(
      REGISTRY_TOKENS.bootstrapAdapter,
      (d) => d.supervisor,
    );
  }

  /** The installer of a domain, loaded on first use. */
  async installer(domain: string): Promise<Installer> {
    const entry = this.domain(domain);
    const installer = await this.load(`installer ${domain}`, entry, entry.descriptor.load);
    checkImplementation(entry.plugin, `installer for domain ${domain}`, installer, {
      domain,
      methods: ['view', 'managed', 'install'],
    });
    return installer;
  }

  /** The adopter of a domain, loaded on first use and checked structurally. */
  async adopter(domain: string): Promise<Adopter> {
    this.domain(domain);
    const entry = this.adopters().find((a) => a.descriptor.domain === domain);
    if (!entry) throw absent(`domain ${domain} has no adopter`);
    const adopter = await this.load(`adopter ${domain}`, entry, entry.descriptor.load);
    checkImplementation(entry.plugin, `adopter for domain ${domain}`, adopter, {
      domain,
      methods: ['candidate', 'mirrorPath'],
    });
    return adopter;
  }

  /** A prober, loaded on first use and checked structurally. */
  async prober(id: string): Promise<Prober> {
    const entry = this.probers().find((p) => p.descriptor.id === id);
    if (!entry) throw new FleetError('UNKNOWN_DOMAIN', `unknown prober ${JSON.stringify(id)}`);
    const prober = await this.load(`prober ${id}`, entry, entry.descriptor.load);
    checkImplementation(entry.plugin, `prober ${id}`, prober, { methods: ['collect', 'evaluate'] });
    return prober;
  }

  /** The adapter of a supervisor, loaded on first use and checked structurally. */
  async bootstrapAdapter(supervisor: SupervisorKind): Promise<BootstrapAdapter> {
    const entry = this.bootstrapAdapters().find((a) => a.descriptor.supervisor === supervisor);
    if (!entry) {
      throw new FleetError('UNKNOWN_DOMAIN', `no bootstrap adapter for supervisor ${supervisor}`);
    }
    const adapter = await this.load(`bootstrap ${supervisor}`, entry, entry.descriptor.load);
    checkImplementation(entry.plugin, `bootstrap adapter ${supervisor}`, adapter, {
      methods: [
        'definition',
        'readDefinition',
        'preflight',
        'installDefinition',
        'start',
        'stop',
        'restart',
        'observe',
        'recordNodeId',
      ],
    });
    return adapter;
  }

  private refusedHint(): { suggestions: string[] } {
    return {
      suggestions: this.problems.map((problem) => `refused: ${problem.message}`),
    };
  }

  private load<T>(
    key: string,
    entry: Registered<unknown>,
    loader: Loader<T> | undefined,
  ): Promise<T> {
    if (!loader) {
      return Promise.reject(
        absent(
          `${key.replace(' ', ' for ')} is declared by ${entry.plugin.name}, which provides no implementation of it`,
        ),
      );
    }
    let pending = this.loaded.get(key) as Promise<T> | undefined;
    if (!pending) {
      // `then`: a loader that throws instead of rejecting is refused the same way.
      pending = Promise.resolve()
        .then(loader)
        .catch((error: unknown) => {
          this.loaded.delete(key);
          throw new FleetError(
            'PLUGIN_REFUSED',
            `plugin ${entry.plugin.name}@${entry.plugin.version} failed to load its ${key}: ${
              error instanceof Error ? error.message : String(error)
            }`,
            { cause: error },
          );
        });
      this.loaded.set(key, pending);
    }
    return pending;
  }
}

function absent(message: string): FleetError {
  return new FleetError('DOMAIN_BEHAVIOUR_ABSENT', message);
}

/** Structural check of a loaded implementation (no `instanceof` across the boundary). */
function checkImplementation(
  plugin: PluginRef,
  what: string,
  value: unknown,
  expected: { domain?: string; methods: readonly string[] },
): void {
  const fail = (why: string): never => {
    throw new FleetError(
      'PLUGIN_REFUSED',
      `plugin ${plugin.name}@${plugin.version}: ${what} ${why}`,
    );
  };
  if (typeof value !== 'object' || value === null) fail('is not an object');
  const record = value as Record<string, unknown>;
  if (expected.domain !== undefined && record['domain'] !== expected.domain) {
    fail(`reports domain ${JSON.stringify(record['domain'])}`);
  }
  for (const method of expected.methods) {
    if (typeof record[method] !== 'function') fail(`lacks ${method}()`);
  }
}
