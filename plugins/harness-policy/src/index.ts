export { harnessPolicyDomain, POLICY_MARKERS } from './domain.js';
export { registration } from './register.js';
// The pure block functions, for the operator-side verbs (`fleet harness reconcile`) and for tests.
export {
  assertNoMarkers,
  extractPolicySection,
  findBlock,
  normaliseBody,
  spliceBlock,
  type Block,
  type Eol,
} from './block.js';
export { harnessPolicyInstaller } from './installer.js';
export { harnessPolicyAdopter } from './adopter.js';
// The §10.3 unattended gate, for `fleet schedule install harness reconcile --unattended`.
export { unattendedRefusal } from './reconcile/model.js';
// The reconcile's memory, read-only (`fleet status` reads it through the `fleet:status` hook).
export { peekState, reconcilePaths } from './reconcile/store.js';
export { default as statusHook } from './status-hook.js';
export type { ReconcileState } from './reconcile/state.js';
