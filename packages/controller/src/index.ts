/**
 * `@fleet/controller`: the node agent (contract §5). Start one with {@link createController}; the
 * token store is shared with the node-local `fleet token` commands.
 */
export { createController, type Controller, type ControllerOptions } from './controller.js';
export {
  DEFAULT_LIMITS,
  type BuildIdentity,
  type ControllerRuntime,
  type Limits,
} from './runtime.js';
export {
  createNodeContext,
  ExecaProcessRunner,
  minimalEnv,
  systemClock,
  type NodeContextOptions,
} from './context.js';
export {
  DEFAULT_GRACE_MS,
  DEFAULT_TTL_MS,
  TokenStore,
  tokenState,
  type IssuedToken,
  type TokenRecord,
  type TokenState,
} from './tokens/store.js';
export { readLegacyTokenHash } from './tokens/auth.js';
export { lineageOf } from './tokens/lineage.js';
export { tokenHash } from './tokens/token.js';
export { parseDuration } from './duration.js';
// The user's login PATH as the controller learns it (`fleet node-policy show` shows it).
export {
  LOGIN_PATH_TIMEOUT_MS,
  currentAccount,
  learnLoginPath,
  type Learned as LearnedLoginPath,
} from './versions/login-path.js';
export { FAILPOINTS, FAILPOINT_ENV, type FailpointName } from './failpoints.js';
export { STATE_DIR, TEMP_PREFIX, statePaths, type StatePaths } from './state-paths.js';
export { parseBackupName, utcStamp } from './backups.js';
// The walk every state directory is opened with (contract §15), for the SSH receiver's own log.
export { checkFdPath, ensureDirUnder, recheckParents } from './fs/safe-path.js';
// The controller's real writer over a home, for node-half tests (@fleet/testkit's fake hosts)
export { createHomeWriter, type HomeWriterOptions } from './home-writer.js';
export { OperationWriter } from './writer.js';
export { type WrittenFile } from './writer-types.js';
export { verifyAuditChain, auditLineHash } from '@fleet/core/node';
// The SSH recovery receiver's records, in the same chain (docs/audit-log.md, "Writers").
export { appendAuditRecords, type ForeignAuditEntry } from './audit/append.js';
export { SSH_CLIENT_PREFIX } from './audit/adopt.js';
// Runtime generations (contract §12): staging, the current pointer, the journal, acceptance, status
export * from './generations/index.js';
export {
  runRuntimeTransaction,
  type RunnerOptions,
  type RunnerOutcome,
} from './lifecycle/runner.js';
export { waitForGo, type GoSignal } from './lifecycle/go-signal.js';
export {
  stageTransaction,
  stageRelease,
  abandonStaged,
  priorFromPointer,
  type StagedRelease,
  type StagedTransaction,
  type StageTransactionInput,
} from './lifecycle/stage.js';
export { admissionDetail, type ReleaseAdmission } from './lifecycle/signature.js';
// The controller's own certificate and listen flags (issue 35: a bootstrap honours fleet.yaml)
export {
  ensureControllerCertificate,
  controllerCertificateFiles,
  controllerListenFlags,
  type ControllerCertificate,
} from './tls/certificate.js';
export { runtimeStatusOf, type StatusInput } from './lifecycle/status.js';
export { spawnRunner, runnerFiles, type RunnerStart, type RunnerArgs } from './lifecycle/spawn.js';
export {
  jobEnvironment,
  launchingAdapter,
  launchNodeJob,
  type NodeJob,
  type StartedJob,
} from './lifecycle/launch.js';
export { runNodeIdSwitch, type NodeIdSwitchOptions } from './lifecycle/switch.js';
export { expectationOf } from './lifecycle/expectation.js';
export { requireBootstrapAllowed } from './lifecycle/policy.js';
export { writeNodePolicy, type WriteNodePolicyOptions } from './policy/file.js';
export {
  OLD_BOOTSTRAP_POLICY_FILE,
  migrateBootstrapPolicy,
  oldBootstrapPolicyPath,
} from './policy/migrate.js';
export {
  NodePolicyStore,
  loadNodePolicy,
  type LoadNodePolicyInput,
  type PolicyView,
} from './policy/store.js';
export {
  nodeSupervisor,
  recordedControllerSupervisor,
  SWITCH_LOG,
  type NodeSupervisor,
} from './lifecycle/supervisor.js';
export { LocalIdentityProbe } from './lifecycle/live.js';
export {
  enrollNode,
  readEnrollRequest,
  enrollRequestSchema,
  ENROLL_REQUEST_SCHEMA,
  type EnrollInput,
  type EnrollRequest,
  type EnrollResult,
} from './enroll/enroll.js';
