export {
  FAKE_FAULTS,
  FAKE_SUPERVISOR_DIR_ENV,
  FAKE_SUPERVISOR_FAULTS_ENV,
  processAlive,
  type CliResult,
  type FakeFault,
} from './common.js';
export {
  FAKE_SUPERVISOR_BIN,
  FakeSupervisorHost,
  createFakeSupervisorHost,
  type FakeSupervisorHostOptions,
} from './host.js';
export { readRun, type RunRecord } from './runs.js';
export { SpawnProcessRunner } from './spawn-runner.js';
export { loginctl, systemctl } from './systemctl.js';
export { systemdRun } from './systemd-run.js';
export { launchctl } from './launchctl.js';
export { AS_DARWIN_NODE_OPTIONS, LAUNCHD_DEFAULT_PATH, launchdRunKey } from './launchd-domain.js';
export { PROCESS_TYPES, readLaunchdJob, type LaunchdJob } from './launchd-job.js';
export { parsePlist, PlistError, type PlistDict, type PlistValue } from './plist-file.js';
export { schtasks } from './schtasks.js';
export {
  decodeTaskFile,
  splitWindowsArguments,
  TASK_NAMESPACE,
  validateTask,
  type TaskDefinition,
} from './task-document.js';
export {
  parseUnitFile,
  parseExecStart,
  splitWords,
  UnitFileError,
  unitValue,
  unitValues,
  type UnitFile,
} from './unit-file.js';
export {
  child as xmlChild,
  parseXml,
  textAt as xmlText,
  XmlError,
  type ParsedXml,
  type XmlElement,
} from './xml.js';
export {
  fakeRuntimeScript,
  fakeRuntimeStarts,
  pointCurrentAt,
  waitForRuntimeStart,
  writeFakeGeneration,
  type FakeRuntimeBehaviour,
  type FakeRuntimeStart,
} from './runtime.js';
export {
  FAKE_ARTIFACT_COMMIT,
  fakeArtifactCommit,
  fakeRuntimeArtifact,
  type FakeArtifactBehaviour,
  type FakeArtifactOptions,
} from './artifact.js';
