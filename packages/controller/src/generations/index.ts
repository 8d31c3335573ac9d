/**
 * Runtime generations on the node (contract §12): staging immutable generations, the atomic
 * `current` pointer, the runtime journal, acceptance and status. See each module's comment.
 */
export {
  acceptRuntime,
  describeFailures,
  runtimeExpectationSchema,
  type Acceptance,
  type AcceptanceCriterion,
  type AcceptanceFailure,
  type RuntimeExpectation,
} from './acceptance.js';
export {
  removeTree,
  stageGeneration,
  stagingName,
  sweepStaging,
  type StageInput,
  type StagedGeneration,
} from './generation.js';
export {
  JOURNAL_FILE,
  RuntimeJournal,
  corruptionError,
  lastTransaction,
  nextSteps,
  parseJournal,
  runtimeJournalPath,
  transitionProblem,
  type ParsedJournal,
  type Transaction,
} from './journal.js';
export {
  JOURNAL_STEPS,
  OUTCOMES,
  TRANSACTION_KINDS,
  encodeRecord,
  stepDataSchemas,
  type JournalRecord,
  type JournalStep,
  type RecordOf,
  type StepData,
  type TransactionKind,
  type TransactionOutcome,
} from './journal-record.js';
export { RUNTIME_LOCK, runtimeLockHolder, runtimeLockPath, withRuntimeLock } from './lock.js';
export {
  currentPointer,
  pointerKindFor,
  type CurrentPointer,
  type PointerKind,
} from './pointer.js';
export {
  reconcileStatus,
  type NextAction,
  type RuntimeObservation,
  type RuntimeState,
  type RuntimeStatus,
} from './status.js';
export { DEFAULT_TAR_LIMITS, readTgz, type TarEntry, type TarLimits } from './tar.js';
export { diskTree, sha256Hex, tarTreeHash, treeHash, type TreeListing } from './tree.js';
export {
  GENERATION_SCHEMA,
  generationManifestSchema,
  requireVerifiedGeneration,
  verifyGeneration,
  type GenerationCheck,
  type GenerationManifest,
} from './verify.js';
