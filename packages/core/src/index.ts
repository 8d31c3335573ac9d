/**
 * `@fleet/core`: the main entry of the public API. What a plugin, the CLI, the controller or the
 * testkit may use is exported here or by one of core's other entries, never by a deep import: the
 * base command and the oclif it is built on are `@fleet/core/command`'s, the CLI's service
 * container is `@fleet/core/di`'s and zod is `@fleet/core/zod`'s, none of them re-exported here;
 * `@fleet/core/node` and `@fleet/core/plugin` are subsets of this entry (docs/architecture.md,
 * "Packages"). Contracts that cross the plugin boundary (interfaces, descriptors) are types and
 * plain data.
 *
 * One file, long as it is: it is the curated list of public exports, read whole — what core
 * promises is decided in this one place, and its API report (etc/core.api.md) is checked.
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

// Repository model
export {
  NODE_PLATFORMS,
  PLATFORMS,
  credentialsSchema,
  fleetManifestSchema,
  hostEntrySchema,
  hostVariablesSchema,
  type Credentials,
  type FleetManifest,
  type HostEntry,
  type HostVariables,
  type NodePlatform,
} from './repo/schema.js';
export { SUPERVISORS } from './schemas/supervisors.js';
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
  repoFromTexts,
  type FleetRepo,
} from './repo/load.js';
export {
  UNCOMMITTED_STATUS_ARGS,
  loadRepoAtHead,
  parsePorcelainPaths,
  uncommittedWarning,
  type RepoSource,
} from './repo/at-commit.js';
export {
  discoverRepo,
  enclosingRepo,
  otherRepoWarning,
  type DiscoverOptions,
} from './repo/discover.js';
export {
  defaultCredentialsPath,
  loadCredentials,
  prepareCredentialsUpdate,
  sshIdentityFor,
  tokenFor,
  type CredentialsUpdate,
} from './repo/credentials.js';
export {
  exampleManifest,
  scaffoldFleetRepo,
  type ScaffoldOptions,
  type ScaffoldResult,
} from './repo/scaffold.js';
export {
  manifestWithArtifact,
  manifestWithDomain,
  hostVariablesWith,
  manifestWithHost,
  manifestWithPlugin,
  manifestWithSigningKey,
  type ArtifactPin,
} from './repo/manifest-edit.js';
export { validateRepo, type ValidateInput, type ValidationReport } from './validate.js';
export {
  MAX_LINK_HOPS,
  decodeSource,
  readWorkingSource,
  resolveRepoLink,
  type CanonicalSource,
} from './repo/sources.js';
export { createGit, identityArgs, type CatFileSession, type Git, type GitResult } from './git.js';

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
export { entropy, scanForSecrets, type SecretFinding } from './secrets/scan.js';
export { unifiedDiff, type DiffOptions } from './diff.js';
export { cacheDirOf } from './cache/store.js';
export { cachedRepoFiles } from './cache/repo-files.js';
export { checkAnswerCache, CHECKS_CACHE_ENTRIES } from './cache/checks.js';
export type { CheckAnswers, InstallerCheck } from './cache/checks.js';

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
  CODE_BEARING_PATHS,
  codeBearingGrants,
  codeBearingReach,
  describeCodeBearing,
  type CodeBearingGrant,
  type CodeBearingPath,
} from './policy/code-bearing.js';
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

// Reports (contract §8.1)
export {
  DRIFT_LAYERS,
  DRIFT_SCHEMA,
  buildDriftReport,
  driftExitCode,
  driftReportSchema,
  hostStatus,
  layerState,
  reportExitCode,
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
export { datedReportDir, REPORT_IGNORE_LINES, writeReportSet } from './report/report-dir.js';
export {
  REPORT_CHAIN_SCHEDULES,
  reportChainSchema,
  type ReportChain,
  type ReportChainSchedule,
} from './report/report-chain.js';

// The version report (contract §11): `fleet.version/v1`, its evaluation and renderers
export { compareSemver, parseSemver, type ParsedSemver } from './semver.js';
export { fileModeProblem, formatFileMode, parseFileMode } from './file-mode.js';
export {
  VERSION_ITEM_KINDS,
  VERSION_SCHEMA,
  buildVersionReport,
  describeLoginPath,
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
  readVersionsThrough,
  refusedProbesKey,
  runVersionReport,
  runtimeItem,
  supervisorItems,
  supervisorProbersFor,
  versionDesired,
  versionHost,
  versionItems,
  versionsRequestFor,
  type ReadVersions,
  type Shadowing,
  type VersionDesired,
  type VersionInput,
} from './config/version.js';
export { runtimeJournalProblem, withJournal } from './config/runtime-journal.js';

// Config verbs (contract §8): per-host targets, file assessment, drift
export {
  WHOLE_FILE_VIEW,
  domainRuntime,
  type DomainRuntime,
  type OperatorHalf,
} from './config/domain-runtime.js';
export { snapshotFilesOf, targetKey, type FileTarget } from './config/file-target.js';
export { buildHistoryIndexes, canonicalPaths, targetsForHost } from './config/targets.js';
export { WAYS_OUT, describeVersion } from './config/file-details.js';
export {
  assessFile,
  liveFilesOf,
  type AssessInput,
  type FileAssessment,
  type LiveFile,
} from './config/file-items.js';
export {
  assessHost,
  assessHostWithProbes,
  prepareAssessment,
  type AssessedFile,
  type Assessment,
} from './config/assessment.js';
export { runDrift } from './config/drift.js';
export type {
  DriftInput,
  ProbeAnswer,
  ProbeCall,
  ProberRuntime,
  ReadLive,
  ReadSnapshot,
} from './config/drift-inputs.js';
export { loadDomainProbers, loadSupervisorProbers } from './config/drift-probers.js';
export {
  ACTION_ROLES,
  RELOAD_ROLE,
  RESTART_ROLE,
  VALIDATE_ROLE,
  derivedPathParameter,
  installActions,
  installParameters,
  probeParameters,
  probedPath,
  type ActionRole,
} from './config/parameters.js';
export {
  buildDomainPlan,
  planHost,
  planRefusal,
  plannedInstall,
  blockingCode,
  type DomainPlan,
  type FilePlan,
  type InstallSelection,
  type PlannedInstall,
} from './config/plan.js';
export {
  APPLY_PLAN_SCHEMA,
  APPLY_SCHEMA,
  applyDecision,
  applyDocumentSchema,
  applyDomainOf,
  applyPlanSchema,
  applySummary,
  filesToInstall,
  hostExitCode,
  parseApplyPlan,
  planMoves,
  unreadHostStatus,
  type ApplyDecision,
  type ApplyDocument,
  type ApplyDomain,
  type ApplyDomainResult,
  type ApplyFile,
  type ApplyHostPlan,
  type ApplyHostResult,
  type ApplyPlan,
} from './config/apply.js';
export {
  adoptCandidate,
  adoptMessage,
  checkAdoptionWrites,
  checkMirrorPathClean,
  commitAdoption,
  managedFileAt,
  promotionWritePath,
  previewAdoption,
  type AdoptCandidate,
  type AdoptionPreview,
  type RepoWrite,
} from './config/adopt.js';
export {
  checkPromotion,
  promotedCanonical,
  promotionRefusal,
  type PromotionCheck,
  type PromotionDrift,
  type PromotionInput,
} from './config/promote.js';

// History-aware classification (contract §8.2)
export {
  PublishedLines,
  classify,
  splitLines,
  type Classification,
  type FleetWrite,
  type KnownLines,
  type KnownSet,
  type KnownVersion,
  type LiveState,
  type LocalLine,
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
export * from './status/status.js';
export * from './status/latest-drift.js';
export {
  STATUS_HOOK,
  statusContributionSchema,
  type StatusContribution,
  type StatusHookOptions,
} from './status/contribution.js';
export { closestName, editDistance } from './closest.js';
export { compareCodeUnits } from './compare.js';
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
export { wholeFileInstaller } from './installers/whole-file.js';
export {
  fileInstaller,
  splicedLive,
  type BlockWrite,
  type CheckedFile,
  type FileInstallerOptions,
} from './installers/file-installer.js';
export { fileAdopter, type FileAdopterOptions } from './installers/file-adopter.js';
// `fleet plugins new`: a new domain plugin package (docs/plugin-authoring.md, "Start from fleet plugins new")
export {
  fleetRegistryUrl,
  pluginScaffold,
  UNSET_FLEET_REGISTRY,
  writePluginScaffold,
  type PluginScaffold,
  type PluginScaffoldOptions,
  type ScaffoldKind,
} from './authoring/plugin-scaffold.js';
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
// Files a domain declares in the repository (the files domain, contract §10.4)
export { repoManifestPath, withRepoFiles } from './config/repo-files.js';
// The managed-block editor every `kind: block` domain uses (contract §6, §10.3, §10.4)
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
  RUNTIME_PACKAGE,
  fleetCheckoutVersion,
  npmPackPlugin,
  npmPackRuntime,
  pinnedPluginTarballs,
  type PackedPluginTarball,
} from './runtime/npm-pack.js';
export {
  SIGNING_NAMESPACE,
  defaultSigningKeyFile,
  ensureSshKey,
  signArtifact,
  signingKey,
  type SigningKey,
} from './runtime/signing.js';
export { editJsonText, editTarballFiles, withPackageVersion } from './runtime/tarball-edit.js';
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

// Controller client
export * from './client/index.js';
