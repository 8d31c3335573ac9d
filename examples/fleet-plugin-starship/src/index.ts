/**
 * fleet-plugin-starship: a third-party fleet domain plugin for `~/.config/starship.toml` that
 * carries a dependency of its own (smol-toml, bundled into its packed form). fleet loads it
 * through its `fleet:register` hook (`register.ts`); these exports are for tests.
 */
export { DOMAIN, starshipDomain } from './domain.js';
export { registration } from './register.js';
export { tomlProblems } from './toml.js';
export { createStarshipInstaller } from './installer.js';
export { createStarshipAdopter } from './adopter.js';
