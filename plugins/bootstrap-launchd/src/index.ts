export { registration } from './register.js';
export {
  createLaunchdAdapter,
  type AgentObservation,
  type LaunchdAdapter,
  type LaunchdAdapterOptions,
} from './adapter.js';
export { launchdControllerSupervisor } from './controller-supervisor.js';
export {
  createAgentProber,
  generatedByFleet,
  LEGACY_REPORT_LABEL,
  prober,
  REPORT_LABEL,
  type AgentFacts,
  type ScheduleAgentFacts,
} from './prober.js';
export {
  AGENTS_DIR,
  controllerLog,
  detachedJobPlist,
  JOB_LABEL_PREFIX,
  JOBS_DIR,
  LABEL,
  launchAgent,
  LOG_DIR,
  plistPath,
  readAgent,
} from './agent-plist.js';
export { parsePrint, type LaunchctlService } from './print.js';
