/**
 * `@fleet/testkit`: fake hosts for domain plugin tests — the same kit first-party plugins use.
 * See README.md for a complete plugin test.
 */
export { FixedClock } from './clock.js';
export {
  RecordedProcessRunner,
  commandLine,
  type ProcessMatcher,
  type ScriptedResult,
} from './processes.js';
export { FakeHost, createFakeHost, type FakeHostOptions } from './host.js';
export { RecordedSupervisor, type RecordedSupervisorOptions } from './supervisor.js';
export {
  TempHomeWriter,
  type HomeWriterFactory,
  type HomeWriterRequest,
  type TempHomeWriterOptions,
  type WriterDomain,
} from './writer.js';
export { registryFromHooks, type PluginUnderTest, type RegisterHookFunction } from './registry.js';
export * from './fake-supervisors/index.js';
export { makeTgz, paxPath, type FixtureEntry } from './tarball.js';
export {
  SKIP_LOG_ENV,
  SYSTEM_TOOLS,
  hasSystemTool,
  requireSystemTools,
  skipForEnvironment,
  type SkippableContext,
  type SystemTool,
} from './system-tools.js';
export {
  FLEET_BIN_ENV,
  acceptanceUnavailable,
  defaultHandEdit,
  fleetExecutable,
  runAcceptance,
  type AcceptanceOptions,
  type AcceptanceResult,
  type RefusedByAction,
} from './acceptance.js';
export { AcceptanceStepError } from './acceptance-steps.js';
export {
  ACCEPTANCE_ROLES,
  rolesNotRun,
  type AcceptanceAction,
  type AcceptanceNodeActions,
  type AcceptanceRole,
} from './acceptance-actions.js';
