/**
 * `@fleet/core`: the public API. Everything a plugin, the CLI, the controller or the testkit may
 * use is exported here, and nothing needs a deep import. Contracts that cross the plugin boundary
 * (interfaces, descriptors) are types and plain data; see docs/architecture.md.
 */

// Contracts (contract §6) and the plugin boundary (contract §2)
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
  type PluginRef,
  type RegistryProblem,
} from './registry/assemble.js';
export { Registry, REGISTRY_TOKENS, type Registered } from './registry/registry.js';

// Errors
export {
  ERROR_CODES,
  ExitCode,
  FleetError,
  describeCode,
  errorEnvelope,
  formatProblem,
  isFleetError,
  type ErrorCode,
  type ErrorEnvelope,
  type FleetErrorLike,
  type FleetErrorOptions,
  type Problem,
} from './errors.js';

// Repository model
export {
  PLATFORMS,
  SUPERVISORS,
  credentialsSchema,
  fleetManifestSchema,
  hostEntrySchema,
  hostVariablesSchema,
  type Credentials,
  type FleetManifest,
  type HostEntry,
  type HostVariables,
} from './repo/schema.js';
export {
  DOMAINS_DIR,
  HOSTS_DIR,
  MANIFEST_FILE,
  hostEntry,
  hostVariables,
  loadRepo,
  parseHostVariables,
  parseManifest,
  readRepoFile,
  type FleetRepo,
} from './repo/load.js';
export { discoverRepo, type DiscoverOptions } from './repo/discover.js';
export {
  defaultCredentialsPath,
  loadCredentials,
  sshIdentityFor,
  tokenFor,
} from './repo/credentials.js';
export {
  exampleManifest,
  scaffoldFleetRepo,
  type ScaffoldOptions,
  type ScaffoldResult,
} from './repo/scaffold.js';
export { validateRepo, type ValidateInput, type ValidationReport } from './validate.js';
export { createGit, identityArgs, type Git, type GitResult } from './git.js';

// Templates, views, secrets, diffs
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
export {
  canonicalPath,
  nodePathFor,
  renderDomainForHost,
  renderFileForHost,
  type RenderedFile,
} from './render/views.js';
export {
  ENV_DIR,
  ENV_FILE,
  loadEnvChain,
  parseEnvFile,
  redactSecrets,
  resolveSecrets,
} from './secrets/env-chain.js';
export { entropy, scanForSecrets, type SecretFinding } from './secrets/scan.js';
export { unifiedDiff, type DiffOptions } from './diff.js';

// Paths and untrusted input
export { isHomePath, parseHomePath, parseRepoPath } from './paths.js';
export { parseStrictJson } from './json.js';
export { parseYaml, type ParsedYaml } from './yaml.js';
export { fieldPath, zodProblems } from './zod-problems.js';

// Reports (contract §8.1)
export {
  DRIFT_LAYERS,
  DRIFT_SCHEMA,
  buildDriftReport,
  driftExitCode,
  driftReportSchema,
  hostStatus,
  layerState,
  type DriftHost,
  type DriftReport,
  type DriftReportInput,
  type DriftReportItem,
  type HostStatus,
} from './report/drift-report.js';
export {
  escapeControl,
  escapeHtml,
  renderDriftHtml,
  renderDriftMarkdown,
} from './report/render-report.js';
export { datedReportDir, writeReportSet } from './report/report-dir.js';

// The version report (contract §11): `fleet.version/v1`, its evaluation and renderers
export { compareSemver, parseSemver, type ParsedSemver } from './semver.js';
export {
  VERSION_ITEM_KINDS,
  VERSION_SCHEMA,
  buildVersionReport,
  versionExitCode,
  versionHostStatus,
  versionReportSchema,
  type VersionHost,
  type VersionItem,
  type VersionReport,
  type VersionReportInput,
  type VersionRuntime,
} from './report/version-report.js';
export { kindState, renderVersionHtml, renderVersionMarkdown } from './report/render-version.js';
export {
  findShadowing,
  runVersionReport,
  runtimeItem,
  versionDesired,
  versionHost,
  versionItems,
  type ReadVersions,
  type Shadowing,
  type VersionDesired,
  type VersionInput,
} from './config/version.js';

// Config verbs (contract §8): per-host targets, file assessment, drift
export {
  WHOLE_FILE_VIEW,
  buildHistoryIndexes,
  canonicalPaths,
  domainRuntime,
  targetKey,
  targetsForHost,
  type DomainRuntime,
  type FileTarget,
  type OperatorHalf,
} from './config/targets.js';
export {
  assessFile,
  type AssessInput,
  type FileAssessment,
  type LiveFile,
} from './config/file-items.js';
export {
  assessHost,
  assessHostWithProbes,
  loadDomainProbers,
  prepareAssessment,
  runDrift,
  type AssessedFile,
  type Assessment,
  type DriftInput,
  type ProbeAnswer,
  type ProbeCall,
  type ProberRuntime,
  type ReadLive,
  type ReadSnapshot,
} from './config/drift.js';
export {
  RELOAD_PARAMETER,
  derivedPathParameter,
  installParameters,
  probeParameters,
  probedPath,
  reloadCommand,
} from './config/parameters.js';
export {
  buildDomainPlan,
  planHost,
  plannedInstall,
  type DomainPlan,
  type FilePlan,
  type InstallSelection,
  type PlannedInstall,
} from './config/plan.js';
export {
  adoptCandidate,
  adoptMessage,
  checkMirrorPathClean,
  commitAdoption,
  managedFileAt,
  type AdoptCandidate,
} from './config/adopt.js';

// History-aware classification (contract §8.2)
export {
  PublishedLines,
  classify,
  splitLines,
  type Classification,
  type LocalLine,
  type PublishedSet,
  type PublishedVersion,
  type VersionSource,
} from './classify/classify.js';
export { HistoryIndex } from './classify/history-index.js';
export {
  parseCatFileBatch,
  parseCatFileEntries,
  readCanonicalHistory,
  readCanonicalSnapshot,
  type CanonicalAtRef,
  type CanonicalHistory,
  type CanonicalSnapshot,
  type CanonicalVersion,
  type CatFileEntry,
} from './classify/history.js';

// Wire protocol
export {
  FLEET_PROTOCOL_VERSION,
  SCOPES,
  WIRE_PREFIX,
  errorBodySchema,
  fileFormatSchema,
  homePathSchema,
  isScope,
  jsonObjectSchema,
  jsonValueSchema,
  operationIdSchema,
  scopeSchema,
  sha256Schema,
  timestampSchema,
  type Scope,
  type WireErrorBody,
} from './wire/protocol.js';
export * from './wire/schemas.js';
export * from './wire/snapshot.js';
export * from './wire/audit-read.js';
export * from './wire/versions.js';
export * from './wire/runtime.js';
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
  auditFileSchema,
  auditLineHash,
  auditRecordSchema,
  verifyAuditChain,
  type AuditHead,
  type AuditOutcome,
  type AuditProblem,
  type AuditRecord,
  type AuditVerification,
  type VerifyAuditOptions,
} from './wire/audit.js';
export { wholeFileInstaller } from './installers/whole-file.js';
export { restoreWritten } from './installers/restore.js';

// Runtime generations: layout, current pointer, supervised command (contract §12)
export * from './runtime/layout.js';
export * from './runtime/definition-file.js';
export * from './runtime/controller-supervisor.js';
export * from './runtime/supervisor-record.js';
export * from './runtime/plan.js';

// Controller client
export * from './client/index.js';
