/**
 * What a plugin's `fleet:register` hook returns (SPEC §2, "The plugin boundary"). Everything here
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

/** A lazily loaded implementation: plugins keep heavy code out of the CLI's start-up. */
export type Loader<T> = () => Promise<T>;

/**
 * A domain: its declaration, and (once the domain has behaviour) its installer. A domain whose
 * behaviour is not written yet has no `load`: it is declared, never faked.
 */
export interface InstallerDescriptor extends DomainDeclaration {
  readonly kind: 'fleet.installer';
  readonly load?: Loader<Installer>;
}

export interface AdopterDescriptor {
  readonly kind: 'fleet.adopter';
  readonly domain: string;
  readonly load?: Loader<Adopter>;
}

export interface ProberDescriptor {
  readonly kind: 'fleet.prober';
  /** Unique across every loaded plugin (`router.volume`). */
  readonly id: string;
  readonly layer: DriftLayer;
  /** The domain it probes, if it belongs to one. */
  readonly domain?: string;
  readonly description: string;
  readonly load?: Loader<Prober>;
}

export interface BootstrapAdapterDescriptor {
  readonly kind: 'fleet.bootstrap-adapter';
  /** Unique across every loaded plugin: one adapter per supervisor. */
  readonly supervisor: SupervisorKind;
  readonly platforms: readonly Platform[];
  readonly description: string;
  readonly load?: Loader<BootstrapAdapter>;
}

/** The value a `fleet:register` hook returns. */
export interface FleetRegistration {
  readonly kind: 'fleet.registration';
  /** The plugin API version the plugin was built against ({@link FLEET_PLUGIN_API_VERSION}). */
  readonly apiVersion: number;
  readonly installers: readonly InstallerDescriptor[];
  readonly adopters: readonly AdopterDescriptor[];
  readonly probers: readonly ProberDescriptor[];
  readonly bootstrapAdapters: readonly BootstrapAdapterDescriptor[];
}

/** The options the host (CLI or controller) passes to every `fleet:register` hook. */
export interface RegisterHookOptions {
  /** The plugin API version of the host that fires the hook. */
  readonly apiVersion: number;
}
