/**
 * `@fleet/core`: the public API. Everything a plugin, the CLI, the controller or the testkit may
 * use is exported here, and nothing needs a deep import. Contracts that cross the plugin boundary
 * (interfaces, descriptors) are types and plain data; see docs/architecture.md.
 */

// Contracts (SPEC §6) and the plugin boundary (SPEC §2)
export type * from './interfaces/domain.js';
export type * from './interfaces/drift.js';
export type * from './interfaces/installer.js';
export type * from './interfaces/adopter.js';
export type * from './interfaces/prober.js';
export type * from './interfaces/bootstrap.js';
export type * from './interfaces/node-context.js';
export type * from './interfaces/registration.js';
export { FLEET_PLUGIN_API_VERSION, REGISTER_HOOK } from './api-version.js';
export { defineRegistration, type RegistrationParts } from './define.js';

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
export { defaultCredentialsPath, loadCredentials, tokenFor } from './repo/credentials.js';
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

// Reports (SPEC §8.1)
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

// History-aware classification (SPEC §8.2)
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
  readCanonicalHistory,
  type CanonicalHistory,
  type CanonicalVersion,
} from './classify/history.js';
