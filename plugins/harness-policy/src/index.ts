export { harnessPolicyDomain } from './domain.js';
export { registration } from './register.js';
export { POLICY_MARKERS } from './domain.js';
