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
