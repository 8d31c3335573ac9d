/**
 * `@fleet/core/plugin`: the plugin API — what a domain plugin (its descriptors, installer,
 * adopter, prober, supervisor adapter, and the types of its operator hooks) imports from core, and
 * nothing else. It is the names the bundled plugins and the examples use (plugins/*, examples/*)
 * and what `fleet plugins new` generates (authoring/plugin-scaffold.ts); docs/plugin-authoring.md
 * describes them. Its API report (etc/core-plugin.api.md) is checked like the other entries', so a
 * change to what plugins may rely on is a reviewed change.
 *
 * Every value here is also exported, from the same module, by `@fleet/core/node` and `@fleet/core`:
 * one object whichever entry it came through. Only node-side values: a plugin's modules load in
 * the node's controller, whose memory contract §14 bounds, so the operator's services that a
 * plugin's own operator-side commands call (harness-policy's reconcile: `assessHost`,
 * `forEachHost`, the controller client) stay on the main entry with their types. Every type the
 * names here refer to is named here too, so an author can spell each one — but for the schema
 * behind `StatusContribution`, a value of the operator's status modules (the API report's one
 * forgotten export). `@fleet/core` and `@fleet/core/node` keep working for third-party plugins.
 */

export {
  ACTION_ROLES,
  type ActionRole,
  RELOAD_ROLE,
  RESTART_ROLE,
  VALIDATE_ROLE,
  derivedPathParameter,
  probedPath,
} from './config/parameter-names.js';
export { type RegistrationParts, type Untagged, defineRegistration } from './define.js';
export {
  ERROR_CODES,
  type ErrorCode,
  type ErrorEnvelope,
  ExitCode,
  FleetError,
  type FleetErrorLike,
  type FleetErrorOptions,
  type Problem,
  isFleetError,
  mostUrgentExit,
} from './errors.js';
export { fileModeProblem } from './file-mode.js';
export { type HomeFile, createHomeFileReader, readHomeFile } from './home-files.js';
export {
  type Block,
  type Eol,
  assertNoMarkers,
  findBlock,
  normaliseBody,
  spliceBlock,
} from './installers/block.js';
export { type FileAdopterOptions, fileAdopter } from './installers/file-adopter.js';
export {
  type BlockWrite,
  type CheckedFile,
  type FileInstallerOptions,
  fileInstaller,
  splicedLive,
} from './installers/file-installer.js';
export {
  type OneFile,
  oneFileRequest,
  requireDistinctFiles,
  requireDomain,
} from './installers/request-guards.js';
export { restoreWritten } from './installers/restore.js';
export {
  type PlannedWrite,
  type WriteVerifiedOptions,
  writeVerified,
} from './installers/transaction.js';
export type { ActionOutcome } from './interfaces/action-outcome.js';
export type { Adopter, Capture } from './interfaces/adopter.js';
export type {
  BootstrapAdapter,
  DefinitionFacts,
  DetachedJob,
  DetachedLaunch,
  ObservedSupervisor,
  SupervisorDefinition,
  SupervisorDefinitionInput,
  SupervisorKind,
  SupervisorProblem,
} from './interfaces/bootstrap.js';
export type {
  BlockMarkers,
  CoupledAction,
  Coupling,
  DerivedPath,
  DomainDeclaration,
  ExampleFile,
  FileFormat,
  FileKind,
  ManagedFile,
} from './interfaces/domain.js';
export type {
  DriftItem,
  DriftLayer,
  DriftState,
  JsonObject,
  JsonValue,
} from './interfaces/drift.js';
export type {
  InstallFileRequest,
  Installer,
  NodeInstallRequest,
  NodeInstallResult,
  PendingRestart,
  ReplaceRequest,
  ReplaceResult,
  SafeFileWriter,
} from './interfaces/installer.js';
export type {
  ActionRun,
  ActionRunOptions,
  ActionRunner,
  Clock,
  NodeContext,
  Platform,
  ProcessRequest,
  ProcessResult,
  ProcessRunner,
  SafeFileReader,
  SecretValues,
} from './interfaces/node-context.js';
export type { ProbeDesired, Prober } from './interfaces/prober.js';
export type {
  AdopterDescriptor,
  BootstrapAdapterDescriptor,
  FleetRegistration,
  InstallerDescriptor,
  Loader,
  ProberDescriptor,
  RegisterHookOptions,
} from './interfaces/registration.js';
export type { ControllerRestart, ControllerSupervisor } from './interfaces/supervisor.js';
export { parseStrictJson } from './json.js';
export { homePathOverlap, isHomePath, parseRepoPath } from './paths.js';
export { isFleetOwnPath } from './policy/fleet-paths.js';
export { actionIdSchema } from './schemas/node-policy.js';
export {
  type UnattendedGate,
  type UnattendedPolicy,
  unattendedRefusal,
} from './policy/unattended.js';
export {
  type Placeholder,
  type PlaceholderNamespace,
  scanPlaceholders,
} from './render/template.js';
export {
  TASK_NAMESPACE,
  quoteSystemdWord,
  quoteWindowsArgument,
  splitSystemdCommandLine,
  splitWindowsArguments,
  windowsTaskArguments,
  xmlEscape,
} from './runtime/command-lines.js';
export {
  type AdapterSupervisorOptions,
  type SwitchOutcome,
  type SwitchPlan,
  adapterControllerSupervisor,
  switchNodeId,
} from './runtime/controller-supervisor.js';
export { homePath, readDefinitionFile, writeDefinitionFile } from './runtime/definition-file.js';
export {
  type RuntimeCommandFacts,
  type RuntimeLayout,
  describeRuntimeCommand,
  resolveGenerationName,
  runtimeLayout,
  withNodeId,
} from './runtime/layout.js';
export {
  type PointerFacts,
  readPointerFacts,
  runtimeDisagreements,
  shortBuildId,
} from './runtime/supervisor-probe.js';
export {
  SUPERVISOR_RECORD_PATH,
  type SupervisorRecord,
  readSupervisorRecord,
  supervisorRecordSchema,
  writeSupervisorRecord,
} from './runtime/supervisor-record.js';
export { resolveSecrets } from './secrets/env-chain.js';
export { type Receipt, receiptSchema } from './wire/receipt.js';
export { type InstallRequest, installRequestSchema } from './wire/schemas.js';
export { type ParsedYaml, parseYaml } from './yaml.js';
export { zodProblems } from './zod-problems.js';
export type { StatusContribution, StatusHookOptions } from './status/contribution.js';
