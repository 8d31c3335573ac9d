export { registration } from './register.js';
export {
  createSystemdUserAdapter,
  parseShow,
  type SystemdUserAdapter,
  type SystemdUserAdapterOptions,
  type UnitObservation,
} from './adapter.js';
export { createUnitProber, prober, type UnitFacts } from './prober.js';
export {
  quoteWord,
  readUnit,
  splitCommandLine,
  systemdUnit,
  UNIT_DIR,
  UNIT_NAME,
  UNIT_PATH,
  unitPath,
} from './unit.js';
export { LINGER_DIR, processCgroupUnit } from './manager.js';
export { systemdControllerSupervisor } from './controller-supervisor.js';
