import { FLEET_PLUGIN_API_VERSION } from './api-version.js';
import type {
  AdopterDescriptor,
  BootstrapAdapterDescriptor,
  FleetRegistration,
  InstallerDescriptor,
  ProberDescriptor,
} from './interfaces/registration.js';

/** A descriptor as a plugin writes it: {@link defineRegistration} adds the `kind` tag. */
export type Untagged<T extends { kind: string }> = Omit<T, 'kind'>;

/** What a plugin passes to {@link defineRegistration}: its descriptors, each list optional. */
export interface RegistrationParts {
  /** One per domain: its declaration and, once it has behaviour, `load` for its installer. */
  readonly installers?: readonly Untagged<InstallerDescriptor>[];
  /** One per domain that can be adopted from (`fleet config adopt`). */
  readonly adopters?: readonly Untagged<AdopterDescriptor>[];
  readonly probers?: readonly Untagged<ProberDescriptor>[];
  /** One per supervisor kind (`systemd-user`, `windows-task`, …). */
  readonly bootstrapAdapters?: readonly Untagged<BootstrapAdapterDescriptor>[];
}

/**
 * Builds the plain, tagged object a plugin's `fleet:register` hook returns, stamped with the
 * plugin API version of the `@fleet/core` the plugin was compiled against.
 */
export function defineRegistration(parts: RegistrationParts): FleetRegistration {
  return {
    kind: 'fleet.registration',
    apiVersion: FLEET_PLUGIN_API_VERSION,
    installers: (parts.installers ?? []).map((d) => ({ ...d, kind: 'fleet.installer' as const })),
    adopters: (parts.adopters ?? []).map((d) => ({ ...d, kind: 'fleet.adopter' as const })),
    probers: (parts.probers ?? []).map((d) => ({ ...d, kind: 'fleet.prober' as const })),
    bootstrapAdapters: (parts.bootstrapAdapters ?? []).map((d) => ({
      ...d,
      kind: 'fleet.bootstrap-adapter' as const,
    })),
  };
}
