export { routerDomain } from './domain.js';
export { registration } from './register.js';
export { routerInstaller } from './installer.js';
export { routerAdopter } from './adopter.js';
export {
  ROUTER_VOLUME_PROBER,
  VOLUME_DIFFERS,
  routerVolumeProber,
  type RouterVolumeFacts,
} from './prober.js';
export { yamlProblems } from './yaml-check.js';
