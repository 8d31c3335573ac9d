export { registration } from './register.js';
export {
  createSystemdUserAdapter,
  parseShow,
  type SystemdUserAdapterOptions,
  type UnitObservation,
} from './adapter.js';
export { createUnitProber, prober, type UnitFacts } from './prober.js';
export {
  quoteWord,
  readUnit,
  splitCommandLine,
  systemdUnit,
  UNIT_NAME,
  UNIT_PATH,
} from './unit.js';
export { systemdControllerSupervisor } from './controller-supervisor.js';
