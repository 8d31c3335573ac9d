export { transportIdentityDomain } from './domain.js';
export { registration } from './register.js';
export {
  createTransportIdentityInstaller,
  transportIdentityInstaller,
  type TransportIdentityOptions,
} from './installer.js';
export { NODE_ID_PROBER, nodeIdProber, type NodeIdFacts } from './prober.js';
export { NODE_ID_PATTERN, isNodeId, parseIdentity, type IdentityParse } from './identity-file.js';
export {
  recordedSupervisor,
  switchNodeId,
  type SwitchOutcome,
  type SwitchPlan,
} from './supervisor.js';
