export { routerDomain } from './domain.js';
export { registration } from './register.js';
