export { registration } from './register.js';
