export { transportIdentityDomain } from './domain.js';
export { registration } from './register.js';
