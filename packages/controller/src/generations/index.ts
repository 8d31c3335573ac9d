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
  JOURNAL_STEPS,
  OUTCOMES,
  RuntimeJournal,
  TRANSACTION_KINDS,
  corruptionError,
  encodeRecord,
  lastTransaction,
  nextSteps,
  parseJournal,
  runtimeJournalPath,
  stepDataSchemas,
  transitionProblem,
  type JournalRecord,
  type JournalStep,
  type ParsedJournal,
  type RecordOf,
  type StepData,
  type Transaction,
  type TransactionKind,
  type TransactionOutcome,
} from './journal.js';
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
