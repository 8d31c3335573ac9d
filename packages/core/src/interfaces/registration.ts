/**
 * What a plugin's `fleet:register` hook returns (contract §2, "The plugin boundary"). Everything here
 * is plain data tagged with a `kind`, plus lazy `load` factories: a user-installed plugin has its
 * own copy of `@fleet/core`, so nothing may depend on `instanceof`, class tokens or a shared
 * container. Write registrations with {@link defineRegistration}; never construct core classes.
 */
import type { Adopter } from './adopter.js';
import type { BootstrapAdapter, SupervisorKind } from './bootstrap.js';
import type { DomainDeclaration } from './domain.js';
import type { DriftLayer } from './drift.js';
import type { Installer } from './installer.js';
import type { Platform } from './node-context.js';
import type { Prober } from './prober.js';

/** The oclif plugin a hook outcome came from. */
export interface PluginRef {
  /** The package name. */
  readonly name: string;
  /** The package version. */
  readonly version: string;
  /** oclif's plugin type: `core` (bundled), `user` (installed), `link` (linked), … */
  readonly type?: string;
  /**
   * The sha256 of the packed tarball it was loaded from: set for a plugin the running generation
   * carries (contract §10.5), whose pin the controller verified; absent for a bundled one.
   */
  readonly sha256?: string;
}

/** A lazily loaded implementation: plugins keep heavy code out of the CLI's start-up. */
export type Loader<T> = () => Promise<T>;

/**
 * A domain: its declaration, and (once the domain has behaviour) its installer. A domain whose
 * behaviour is not written yet has no `load`: it is declared, never faked.
 */
export interface InstallerDescriptor extends DomainDeclaration {
  /** The tag {@link defineRegistration} adds. */
  readonly kind: 'fleet.installer';
  /** Loads the installer (`() => import('./installer.js').then((m) => m.createInstaller())`). */
  readonly load?: Loader<Installer>;
}

/** A domain's adopter: the domain must be declared by the same plugin. */
export interface AdopterDescriptor {
  /** The tag {@link defineRegistration} adds. */
  readonly kind: 'fleet.adopter';
  /** The domain it adopts for. */
  readonly domain: string;
  /** Loads the adopter. */
  readonly load?: Loader<Adopter>;
}

/** A prober; its `domain`, when given, must be declared by the same plugin. */
export interface ProberDescriptor {
  /** The tag {@link defineRegistration} adds. */
  readonly kind: 'fleet.prober';
  /** Unique across every loaded plugin (`router.volume`). */
  readonly id: string;
  /** The drift layer of its items. */
  readonly layer: DriftLayer;
  /** The domain it probes, if it belongs to one. */
  readonly domain?: string;
  /** One line for reports. */
  readonly description: string;
  /** Loads the prober. */
  readonly load?: Loader<Prober>;
}

/** A supervisor adapter (contract §12). */
export interface BootstrapAdapterDescriptor {
  /** The tag {@link defineRegistration} adds. */
  readonly kind: 'fleet.bootstrap-adapter';
  /** Unique across every loaded plugin: one adapter per supervisor. */
  readonly supervisor: SupervisorKind;
  /** The platforms it runs on. */
  readonly platforms: readonly Platform[];
  /** One line for reports. */
  readonly description: string;
  /** Loads the adapter. */
  readonly load?: Loader<BootstrapAdapter>;
}

/** The value a `fleet:register` hook returns. */
export interface FleetRegistration {
  /** The tag the core recognises a registration by (no `instanceof` across the boundary). */
  readonly kind: 'fleet.registration';
  /** The plugin API version the plugin was built against ({@link FLEET_PLUGIN_API_VERSION}). */
  readonly apiVersion: number;
  /** One per domain. */
  readonly installers: readonly InstallerDescriptor[];
  /** Adopters of this plugin's domains. */
  readonly adopters: readonly AdopterDescriptor[];
  /** Probers, of this plugin's domains or of the node. */
  readonly probers: readonly ProberDescriptor[];
  /** Supervisor adapters. */
  readonly bootstrapAdapters: readonly BootstrapAdapterDescriptor[];
}

/** The options the host (CLI or controller) passes to every `fleet:register` hook. */
export interface RegisterHookOptions {
  /** The plugin API version of the host that fires the hook. */
  readonly apiVersion: number;
}
