/**
 * fleet-plugin-gitconfig: a third-party fleet domain plugin for the fleet-managed block of
 * `~/.gitconfig`. fleet loads it through its `fleet:register` hook (`register.ts`); these exports
 * are for tests. The managed-block editor it uses is `@fleet/core`'s (`findBlock`, `spliceBlock`).
 */
export { DOMAIN, GITCONFIG_MARKERS, IDENTITY_PROBER, gitconfigDomain } from './domain.js';
export { registration } from './register.js';
export { fragmentProblems } from './fragment.js';
export { createGitconfigInstaller } from './installer.js';
export { createGitconfigAdopter } from './adopter.js';
export { createIdentityProber, type IdentityFacts } from './prober.js';
