/**
 * The operator's services, one entry (docs/architecture.md, "Packages"): what the `fleet` CLI's
 * commands call after parsing their flags, with their option and result types. Each service takes
 * an options object that names what to do, never a flag; a command parses, calls one service and
 * prints what it answers (with the renderers below). Nothing else of this package is public: the
 * modules behind these names are free to move.
 */

// config: inventory, export, plan, install, adopt, drift (contract §7, §8)
export { loadFleetContext, type ContextOptions, type FleetContext } from './config/context.js';
export { readLiveThroughController, readSnapshotThroughController } from './config/live.js';
export {
  configInstall,
  type ConfigInstallOptions,
  type ConfigInstallResult,
} from './config/config-install.js';
export { installPlanned, type InstallPlannedInput } from './config/install.js';
export { adoptModeNote, liveModeFor } from './config/adopt-mode.js';
export { renderApplyHost, renderApplySummary, renderPlan, renderReceipt } from './config/render.js';

// apply (contract §7 `fleet apply`)
export { APPLY_VERB, runApply, savedPlan, type ApplyInput, type ApplyRun } from './config/apply.js';

// bootstrap: plan, apply, status, rollback (contract §12)
export {
  bootstrapApply,
  type BootstrapApplyOptions,
  type BootstrapApplyResult,
} from './runtime/bootstrap-apply.js';
export { loadHostRuntime, type HostRuntime } from './runtime/host.js';
export { derivePlan, observeRuntime, type DerivedPlan } from './runtime/bootstrap-plan.js';
export { renderBootstrapPlan, renderRuntimeStatus } from './runtime/render.js';
export { dirtyWarning, loadArtifact, type LoadedArtifact } from './runtime/artifact.js';
export { followTimeout } from './runtime/apply.js';
export { followTransaction, unfinished } from './runtime/follow.js';
export { recordRuntimeVerb } from './runtime/record.js';
export { runReceiver, type ReceiverOptions } from './bootstrap/receiver.js';
export { checkSshdEnvironment } from './bootstrap/sshd-check.js';

// upgrade (contract §11)
export {
  currentNote,
  renderFleetUpgradeHost,
  renderFleetUpgradeSummary,
  upgradeFleet,
  upgradeHost,
  type UpgradeFleetInput,
  type UpgradeHostInput,
} from './runtime/upgrade.js';

// host add, host remove
export { addHost, type AddHostOptions, type AddHostResult } from './host/add.js';
export { removeHost, type RemoveHostOptions, type RemoveHostResult } from './host/remove.js';

// audit show, audit verify
export {
  AUDIT_SHOW_SCHEMA,
  AUDIT_VERIFY_SCHEMA,
  failedVerdict,
  parseLines,
  readHomeLog,
  readHostLog,
  readHostTail,
  safeValue,
  splitLog,
  verdictWord,
  verifyExitCode,
  verifyLog,
  type HostVerdict,
} from './audit/log.js';
export { repairHomeLog, type RepairResult } from './audit/repair.js';
export { releaseHomeLog } from './audit/release.js';

// release, release verify
export { release, type ReleaseOptions, type ReleaseResult } from './release/release.js';
export { verifyRelease, type VerifyOptions, type VerifyResult } from './release/release-verify.js';

// token issue, list, revoke, rotate (through a host's controller)
export { checkRevoke, recordTokenVerb, remoteTokens, rotateRemote } from './tokens/remote.js';
export { issuerText, lineageText, listWithLineage, revokeWithMinted } from './tokens/lineage.js';

// schedule install, list, remove, verify; report-run
export {
  installSchedule,
  listSchedules,
  removeSchedule,
  type InstalledSchedule,
  type ScheduleHost,
} from './schedule/io.js';
export { operatorScheduleHost } from './schedule/host.js';
export { assertUnattendedAllowed } from './schedule/policy.js';
export {
  classifyJob,
  describeLastRun,
  formatEvery,
  jobArguments,
  jobOf,
  normaliseName,
  parseEvery,
  REPORT_RUN_JOBS,
  reportRunCommand,
  scheduleName,
  TEST_PERIOD_ENV,
  testPeriodSeconds,
} from './schedule/model.js';
export {
  launchdPlist,
  localStartBoundary,
  parseEnvironmentFlags,
  PLIST_DOCTYPE,
  reportTaskXml,
  systemdTimerFiles,
  taskInterval,
  type ScheduleInput,
} from './schedule/generate.js';
export { chainVerdictLine, type ChainVerdict } from './schedule/chain.js';
export { verifyReports, verifyReportsExitCode, writeChainedReport } from './schedule/chain-io.js';
export { ensureReportsIgnored } from './schedule/ignore.js';

// plugins new
export { newPlugin, nextSteps, type WiredDomain } from './plugins/new.js';
