/** The operator's controller client (contract §5, issue 3 item 6): one place to import it from. */
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  createControllerClient,
  newOperationId,
  type ControllerClient,
  type ControllerClientOptions,
  type WithOperationId,
} from './client.js';
export { ControllerError, type ControllerErrorOptions, type RequestTarget } from './errors.js';
export {
  DEFAULT_HOST_CONCURRENCY,
  asFleetError,
  forEachHost,
  type ForEachHostOptions,
  type HostOutcome,
} from './for-each-host.js';
export {
  OPERATOR_LOG_FILE,
  operatorLogPath,
  operatorLogRecord,
  operatorLogRecordSchema,
  operatorStateDir,
  recordOperatorVerb,
  scrubDetail,
  type OperatorLogOptions,
  type OperatorLogRecord,
  type OperatorVerb,
} from './operator-log.js';
export {
  AUDIT_HEADS_DIR,
  AUDIT_HEADS_FILE,
  auditHeadsPath,
  forgetVanishedRepos,
  readAuditHeads,
  recordSeenHeads,
  settleSeenHeads,
  updateAuditHeads,
  type AuditHeadsOptions,
} from './audit-heads.js';
export {
  AUDIT_HEAD_HEADER,
  MAX_HEADS_PER_HOST,
  addSeenHead,
  auditHeadsFileSchema,
  observeAuditHead,
  parseAuditHeadHeader,
  seenHeadsOf,
  takeObservedHeads,
  type AuditHeadsFile,
  type SeenHead,
} from './seen-heads.js';
export { certificateFingerprint, normaliseFingerprint } from './fingerprint.js';
export { clientForHost, type ClientForHostOptions } from './for-host.js';
export { labDocumentSchema, type LabDocument } from './lab-document.js';
export { installThrough, refusedRepoCommitKey, type InstallSent } from './install.js';
export {
  DEFAULT_PENDING_TIMEOUT_MS,
  hasPendingActions,
  settlePendingInstall,
  type SettleOptions,
} from './pending.js';
