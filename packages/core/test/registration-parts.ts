/**
 * The plugin parts the registry's tests build registrations from: a domain declaration owning one
 * whole YAML file, and a structurally valid installer (a plain object: no class, no instanceof).
 */
import type { RegistrationParts } from '../src/define.js';
import type { Installer } from '../src/interfaces/installer.js';

export type InstallerPart = NonNullable<RegistrationParts['installers']>[number];

/** A minimal valid domain declaration owning `~/.config/<name>/<name>.yaml`. */
export function domainPart(name: string, overrides: Partial<InstallerPart> = {}): InstallerPart {
  return {
    domain: name,
    description: `${name} domain`,
    files: [
      {
        id: `${name}.yaml`,
        path: `~/.config/${name}/${name}.yaml`,
        canonical: `${name}.yaml`,
        kind: 'whole',
        format: 'yaml',
      },
    ],
    hostVariables: [],
    coupling: { kind: 'none' },
    ...overrides,
  };
}

/** A structurally valid installer for `name`. */
export function fakeInstaller(name: string): Installer {
  return {
    domain: name,
    view: (_file, rendered) => rendered,
    managed: (_file, live) => live,
    install: () => Promise.resolve({ files: [], actions: [], verified: true }),
  };
}
