/**
 * `@fleet/core/node`: the node-side entry point — what the controller and the node halves of the
 * plugins (registration, installers, adopters, probers, supervisor adapters) use, and nothing of
 * the operator's (drift, apply, plan, reports, the plugin scaffold, the repository loader, the
 * client's logs). Every export here is also exported, from the same module, by the main entry
 * `@fleet/core`: a value is one object whichever entry it came through (`instanceof FleetError`
 * holds across both). Why a second entry: a long-lived controller keeps the source text, bytecode
 * and schema objects of every module it loads for its whole life, and contract §14 bounds its idle
 * memory against a bare `node:http` server's; the main entry loads the operator's modules too.
 * A third-party plugin importing `@fleet/core` keeps working: it only costs its controller more.
 */

// Contracts (contract §6) and the plugin boundary (contract §2): types, erased at run time
export type * from './interfaces/domain.js';
export type * from './interfaces/drift.js';
export type * from './interfaces/installer.js';
export type * from './interfaces/adopter.js';
export type * from './interfaces/prober.js';
export type * from './interfaces/bootstrap.js';
export type * from './interfaces/node-context.js';
export type * from './interfaces/registration.js';
export type * from './interfaces/supervisor.js';
export { FLEET_PLUGIN_API_VERSION, REGISTER_HOOK } from './api-version.js';
export { CONTROLLER_NODE_OPTIONS } from './runtime-flags.js';
export { defineRegistration, type RegistrationParts, type Untagged } from './define.js';

// Registry
export {
  assembleRegistrations,
  type AcceptedRegistration,
  type Assembly,
  type HookOutcome,
  type RegistryProblem,
} from './registry/assemble.js';
export {
  Registry,
  REGISTRY_TOKENS,
  type Registered,
  type RegistryStore,
} from './registry/registry.js';

// Errors
export {
  ERROR_CODES,
  ExitCode,
  FleetError,
  PreconditionFailedError,
  describeCode,
  errorEnvelope,
  formatProblem,
  isFleetError,
  mostUrgentExit,
  usageErrorMessage,
  type ErrorCode,
  type ErrorEnvelope,
  type FleetErrorLike,
  type FleetErrorOptions,
  type MissingArg,
  type Problem,
} from './errors.js';

// The repository's schemas a node checks against (not the repository loader)
export {
  PLATFORMS,
  credentialsSchema,
  fleetManifestSchema,
  hostEntrySchema,
  hostVariablesSchema,
  type Credentials,
  type FleetManifest,
  type HostEntry,
  type HostVariables,
} from './repo/schema.js';
export { SUPERVISORS } from './schemas/supervisors.js';

// Templates and secrets on the node: the env chain, redaction, placeholders
export {
  placeholder,
  renderTemplate,
  reverseSubstitute,
  scanPlaceholders,
  secretNames,
  type Placeholder,
  type PlaceholderNamespace,
  type RenderOptions,
  type ReverseResult,
} from './render/template.js';
export { fileStamp, type FileStampOptions } from './file-stamp.js';
export {
  ENV_DIR,
  ENV_FILE,
  createEnvChainLoader,
  loadEnvChain,
  parseEnvFile,
  redactSecrets,
  resolveSecrets,
  shortSecretNames,
} from './secrets/env-chain.js';
export {
  SECRET_MIN_LENGTH,
  createRedactor,
  type RememberedSecret,
  type Redactor,
} from './secrets/redact.js';
export { unifiedDiff, type DiffOptions } from './diff.js';

// The node policy (contract §5.1, docs/node-policy.md)
export {
  DEFAULT_ACTION_OUTPUT_BYTES,
  DEFAULT_ACTION_TIMEOUT_SECONDS,
  MAX_ACTION_OUTPUT_BYTES,
  MAX_ACTION_TIMEOUT_SECONDS,
  NODE_POLICY_PATH,
  NODE_POLICY_VERSION,
  nodePolicySchema,
  policyActionSchema,
  type DomainPolicy,
  type NodePolicy,
  type NodePolicyInput,
  type NodeRuntimePolicy,
  type NodeLabPolicy,
  type PolicyAction,
  type PolicyPattern,
} from './policy/schema.js';
export { actionIdSchema, isAbsoluteProgram, type NodeSupervisor } from './schemas/node-policy.js';
export {
  MAX_NODE_POLICY_BYTES,
  checkNodePolicy,
  unknownPolicyDomains,
  type CheckNodePolicyOptions,
  defaultNodePolicy,
  formatNodePolicy,
  nodePolicyFile,
  nodePolicyFix,
  parseNodePolicy,
  readNodePolicyFile,
  type LoadedNodePolicy,
  type NodePolicyStamp,
  type ReadNodePolicyOptions,
} from './policy/load.js';
export {
  ACTION_FILE_PLACEHOLDER,
  actionArgv,
  TOOL_OUTPUT_BYTES,
  TOOL_OUTPUT_LINES,
  actionOutput,
  outputTail,
  policyActionRunner,
  type PolicyActionsOptions,
} from './policy/actions.js';
export {
  unattendedRefusal,
  type UnattendedGate,
  type UnattendedPolicy,
} from './policy/unattended.js';
export {
  isBroadPattern,
  isHomePattern,
  matchHomePattern,
  parseHomePattern,
  patternReachesFleetState,
  policyPatternText,
  type HomePattern,
} from './policy/pattern.js';
export { foldPath } from './policy/fold.js';
export {
  FLEET_OWN_DIRS,
  FLEET_OWN_FILES,
  fleetOwnReason,
  isFleetOwnPath,
} from './policy/fleet-paths.js';

// Paths and untrusted input
export {
  homePathKey,
  homePathOverlap,
  isHomePath,
  parseHomePath,
  parseNodePathArgument,
  parseRepoPath,
  type NodePathArgument,
} from './paths.js';
export { MAX_JSON_DEPTH, parseStrictJson } from './json.js';
export { parseYaml, type ParsedYaml } from './yaml.js';
export { fieldPath, zodProblems } from './zod-problems.js';
export { fileModeProblem, formatFileMode, parseFileMode } from './file-mode.js';
export { escapeControl } from './report/escape-control.js';
export { compareSemver, parseSemver, type ParsedSemver } from './semver.js';
export { closestName, editDistance } from './closest.js';
export { compareCodeUnits } from './compare.js';

// What an install's parameters and actions are called (contract §8.4), without the repo model
export {
  ACTION_ROLES,
  RELOAD_ROLE,
  RESTART_ROLE,
  VALIDATE_ROLE,
  derivedPathParameter,
  probedPath,
  type ActionRole,
} from './config/parameter-names.js';

// Wire protocol
export {
  AUDIT_HEAD_HEADER,
  FLEET_PROTOCOL_VERSION,
  PROTOCOL_HEADER,
  SCOPES,
  WIRE_PREFIX,
  commitIdSchema,
  errorBodySchema,
  fileFormatSchema,
  homePathSchema,
  isScope,
  jsonObjectSchema,
  jsonValueSchema,
  describeProtocol,
  observedModeSchema,
  operationIdSchema,
  protocolOfHeader,
  scopeSchema,
  sha256Schema,
  timestampSchema,
  type Scope,
  type WireErrorBody,
} from './wire/protocol.js';
export * from './wire/schemas.js';
export * from './wire/snapshot.js';
export * from './wire/audit-read.js';
export * from './wire/audit-segments.js';
export * from './wire/versions.js';
export * from './schemas/tool-name.js';
export * from './wire/runtime.js';
export * from './wire/tokens.js';
export * from './wire/summary.js';
export {
  RECEIPT_SCHEMA,
  receiptActionSchema,
  receiptFileSchema,
  receiptSchema,
  type Receipt,
  type ReceiptFile,
} from './wire/receipt.js';
export {
  OPERATIONS,
  ROUTES,
  matchRoute,
  proberScope,
  routeOf,
  routePath,
  type OperationName,
  type ProberScopeInput,
  type RouteMatch,
  type RouteSpec,
} from './wire/routes.js';
export {
  AUDIT_GENESIS,
  AUDIT_OUTCOMES,
  auditActionSchema,
  auditAggregateSchema,
  auditFileSchema,
  auditLineHash,
  auditRecordSchema,
  auditSegmentSchema,
  verifyAuditChain,
  type AuditAction,
  type AuditHead,
  type AuditOutcome,
  type AuditProblem,
  type AuditRecord,
  type AuditVerification,
  type VerifyAuditOptions,
} from './wire/audit.js';

// Installers and adopters on the node (contract §6, §10.3, §10.4)
export { wholeFileInstaller } from './installers/whole-file.js';
export {
  fileInstaller,
  splicedLive,
  type BlockWrite,
  type CheckedFile,
  type FileInstallerOptions,
} from './installers/file-installer.js';
export { fileAdopter, type FileAdopterOptions } from './installers/file-adopter.js';
export { restoreWritten } from './installers/restore.js';
export { ActionFailedError } from './installers/file-actions.js';
export {
  oneFileRequest,
  requireDistinctFiles,
  requireDomain,
  type OneFile,
} from './installers/request-guards.js';
export {
  HOME_FILE_READ_LIMIT,
  createHomeFileReader,
  readHomeFile,
  type HomeFile,
} from './home-files.js';
export {
  assertNoMarkers,
  decodeUtf8,
  findBlock,
  normaliseBody,
  spliceBlock,
  type Block,
  type Eol,
} from './installers/block.js';
export {
  writeVerified,
  type PlannedWrite,
  type WriteVerifiedOptions,
} from './installers/transaction.js';

// Runtime generations: layout, current pointer, supervised command (contract §12)
export * from './runtime/layout.js';
export * from './runtime/definition-file.js';
export * from './runtime/controller-supervisor.js';
export * from './runtime/supervisor-record.js';
export * from './runtime/node-supervisor.js';
export * from './runtime/plan.js';
export * from './runtime/listen.js';
export * from './runtime/build-record.js';
export * from './schemas/commit-label.js';
export * from './runtime/plugins.js';
export * from './schemas/runtime-plugins.js';
export * from './runtime/sshsig.js';
export {
  readPointerFacts,
  runtimeDisagreements,
  shortBuildId,
  type PointerFacts,
} from './runtime/supervisor-probe.js';
export {
  TASK_NAMESPACE,
  TASK_PATH_MAX,
  WINDOWS_COMMAND_LINE_MAX,
  quoteSystemdWord,
  quoteWindowsArgument,
  splitSystemdCommandLine,
  splitWindowsArguments,
  windowsTaskArguments,
  xmlEscape,
} from './runtime/command-lines.js';

// The controller's own client (a node checks a staged generation through it, contract §12)
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  createControllerClient,
  newOperationId,
  type ControllerClient,
  type ControllerClientOptions,
  type WithOperationId,
} from './client/client.js';
export {
  ControllerError,
  type ControllerErrorOptions,
  type RequestTarget,
} from './client/errors.js';
export { certificateFingerprint, normaliseFingerprint } from './client/fingerprint.js';
