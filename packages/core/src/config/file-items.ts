/**
 * One file target's drift item (layer `file`), pure — THE classification of every verb (contract
 * §8.2: drift, plan, install, reconcile and apply call nothing else, so they always agree): the
 * desired view already passed the domain's checks (`targetsForHost`: a canonical the installer
 * would refuse is an `error` here, in every verb), the live file as the node exported it
 * (redacted) is reduced to its managed part by the domain's installer and classified against the
 * desired view, the published versions and the node's record of fleet's own writes. A diff is
 * computed only for what differs.
 */
import type { HistoryIndex } from '../classify/history-index.js';
import {
  classify,
  type Classification,
  type FleetWrite,
  type LocalLine,
} from '../classify/classify.js';
import { classifyMode, describeMode, type ModeFacts } from '../classify/attributes.js';
import { classifyBytes, describeBytes, sha256Hex } from '../classify/bytes.js';
import { unifiedDiff } from '../diff.js';
import { secretNames } from '../render/template.js';
import { isFleetError } from '../errors.js';
import {
  deletedDetail,
  lineNumbers,
  modifiedDetail,
  plural,
  staleDetail,
  WAYS_OUT,
} from './file-details.js';
import type { DriftReportItem } from '../report/drift-report.js';
import type { SnapshotResponse } from '../wire/snapshot.js';
import type { OperatorHalf } from './domain-runtime.js';
import type { FileTarget } from './file-target.js';

/** The live state of one file, as the node reported it. */
export type LiveFile =
  | {
      readonly kind: 'absent';
      /** The node's record of fleet's writes at the path, newest first (`[]`: none or not kept). */
      readonly writes?: readonly FleetWrite[];
    }
  | {
      readonly kind: 'present';
      /** Redacted content (secret values already back to placeholders). */
      readonly content: string;
      /** sha256 of the live bytes (before redaction). */
      readonly sha256: string;
      readonly writes?: readonly FleetWrite[];
      /** Its permission bits (`"0644"`), when asked for and the node has them (not on Windows). */
      readonly mode?: string;
      /** Secret names it holds an earlier value of (the node's secret memory; names only). */
      readonly rotatedSecrets?: readonly string[];
      /** Its size in bytes, as the node read it. */
      readonly size?: number;
      /** Not UTF-8 text (asked for a bytes source): `content` is empty, compare by `sha256`. */
      readonly binary?: true;
    }
  | { readonly kind: 'refused'; readonly code: string; readonly message: string };

/**
 * A snapshot's files as the classification reads them (every config verb's transport turns the
 * node's answer into this). The backups the node lists are not known versions and are dropped.
 */
export function liveFilesOf(answer: SnapshotResponse): Map<string, LiveFile> {
  const live = new Map<string, LiveFile>();
  for (const file of answer.files) {
    if (file.state === 'refused') {
      live.set(file.path, { kind: 'refused', code: file.code, message: file.message });
    } else if (file.state === 'absent') {
      live.set(file.path, { kind: 'absent', writes: file.writes ?? [] });
    } else {
      live.set(file.path, {
        kind: 'present',
        content: file.content,
        sha256: file.sha256,
        writes: file.writes ?? [],
        size: file.size,
        ...(file.binary === undefined ? {} : { binary: file.binary }),
        ...(file.mode === undefined ? {} : { mode: file.mode }),
        ...(file.rotatedSecrets === undefined ? {} : { rotatedSecrets: file.rotatedSecrets }),
      });
    }
  }
  return live;
}

const UNSUPPORTED_CODES = new Set([
  'FORMAT_UNSUPPORTED',
  'ENCODING_INVALID',
  'FILE_TOO_LARGE',
  'NOT_REGULAR_FILE',
  'SYMLINK_REFUSED',
  'HARDLINK_REFUSED',
]);

export interface FileAssessment {
  readonly item: DriftReportItem;
  /**
   * For an `error` or `unsupported` item, the error code of what keeps the file from being
   * installed: the node's refusal (`DOMAIN_NOT_SERVED`, `POLICY_REFUSED`, `SYMLINK_REFUSED`, …),
   * `RENDER_FAILED` when the desired content cannot be computed or the domain's check refuses it,
   * or the live file's own problem (`MARKERS_UNPAIRED`). An install's refusal takes it (plan.ts).
   */
  readonly code?: string;
  readonly classification?: Classification;
  /** The live sha256 the assessment was made against (`null`: absent). */
  readonly liveSha256: string | null;
  /** The live managed part (template space), for plans. */
  readonly liveManaged?: string | null;
}

export interface AssessInput {
  readonly target: FileTarget;
  readonly live: LiveFile;
  readonly operator: OperatorHalf;
  readonly index: HistoryIndex;
  readonly variables: Readonly<Record<string, string>>;
  /** The host's earlier variable sets (see `HistoryIndex.forHost`). */
  readonly earlierVariables?: readonly Readonly<Record<string, string>>[];
  /** The commit the desired view comes from (named when only line endings differ from it). */
  readonly repoCommit: string;
}

const lines = (list: readonly LocalLine[]) => list.map((l) => ({ line: l.line, text: l.text }));

/**
 * The mode facts of a whole file whose entry says a mode (contract §10.4): the live mode, the
 * repository's, and the mode fleet wrote the live content with (the record's write of these bytes,
 * else its newest write). Nothing for a block file, or a node that reports no mode (Windows).
 */
export function modeFactsOf(target: FileTarget, live: LiveFile): ModeFacts {
  const wanted = target.file.mode;
  if (wanted === undefined || target.file.kind !== 'whole' || live.kind !== 'present') return {};
  const writes = live.writes ?? [];
  const write = writes.find((w) => w.sha256 === live.sha256) ?? writes[0];
  return {
    wanted,
    ...(live.mode === undefined ? {} : { live: live.mode }),
    ...(write?.mode === undefined ? {} : { written: write.mode }),
  };
}

/** The secret names a present file holds an earlier value of, within its managed part. */
function rotatedIn(live: LiveFile, managed: string | null | undefined): string[] {
  if (live.kind !== 'present' || managed === null || managed === undefined) return [];
  const inManaged = new Set(secretNames(managed));
  return (live.rotatedSecrets ?? []).filter((name) => inManaged.has(name));
}

const secretsRotated = (names: readonly string[]) =>
  `secret${names.length === 1 ? '' : 's'} ${names.join(', ')} rotated: the host holds the earlier value`;

/**
 * Classifies one file target and builds its drift item: its content (`assessContent`), then what
 * the content's bytes alone do not show (core `classify/attributes.ts`). A whole file's mode
 * changed by hand since fleet wrote it — narrowed or widened — is `modified` (refused without
 * --force) even when its content is current or stale; a mode the repository changed is `stale`
 * (contract §10.4). A file holding an earlier value of a secret is `stale` when its redacted text
 * is current ("secret NAME rotated"), so a rotation that has not reached a host shows. With any
 * other content state the facts are added to the item's detail.
 */
export function assessFile(input: AssessInput): FileAssessment {
  const assessed = assessContent(input);
  if (assessed.item.state === 'error' || assessed.item.state === 'unsupported') return assessed;
  const mode = classifyMode(modeFactsOf(input.target, input.live));
  const rotated = rotatedIn(input.live, assessed.liveManaged);
  if (mode.state === 'current' && rotated.length === 0) return assessed;
  let { item } = assessed;
  const notes: string[] = [];
  if (rotated.length > 0) {
    item = { ...item, rotatedSecrets: rotated };
    notes.push(secretsRotated(rotated));
    if (item.state === 'current') item = { ...item, state: 'stale' };
  }
  if (mode.state !== 'current') {
    const { live, wanted, written } = mode;
    item = { ...item, mode: { live, wanted, ...(written === undefined ? {} : { written }) } };
    notes.push(describeMode(mode));
    if (mode.state === 'modified' && (item.state === 'current' || item.state === 'stale')) {
      item = { ...item, state: 'modified' };
      notes.push(`Never replaced without --force: ${MODE_WAYS_OUT}`);
    } else if (item.state === 'current') item = { ...item, state: 'stale' };
  }
  const said = notes.join('; ');
  const detail =
    assessed.item.state === 'current'
      ? `${said}: the content is current${item.state === 'stale' ? '; safe to replace' : ''}`
      : `${assessed.item.detail ?? assessed.item.state}; and its ${said}`;
  return { ...assessed, item: { ...item, detail } };
}

/** The ways out of a mode changed by hand: `adopt` takes content only (contract §10.4). */
export const MODE_WAYS_OUT =
  'put the mode in the files.yaml entry (or chmod the file back), or overwrite it with `--force`';

function assessContent(input: AssessInput): FileAssessment {
  const { target, live, operator } = input;
  const base = { layer: 'file' as const, domain: target.domain, path: target.path };
  const liveSha256 = live.kind === 'present' ? live.sha256 : null;
  if (!target.desired.ok) {
    const { problem } = target.desired;
    return {
      item: {
        ...base,
        state: 'error',
        detail:
          `cannot compute the desired content: ${problem.file ?? ''}${problem.line ? `:${problem.line}` : ''} ${problem.message}`.trim(),
      },
      code: 'RENDER_FAILED',
      liveSha256,
    };
  }
  const desired = target.desired.content;
  if (live.kind === 'refused') {
    const state = UNSUPPORTED_CODES.has(live.code) ? 'unsupported' : 'error';
    return {
      item: { ...base, state, detail: `${live.code}: ${live.message}` },
      code: live.code,
      liveSha256,
    };
  }
  if (target.desired.encoding !== undefined) return assessBytes(input, live, desired);
  let liveManaged: string | null = null;
  if (live.kind === 'present') {
    try {
      liveManaged = operator.managed(target.file, live.content);
    } catch (error) {
      const why = isFleetError(error) ? `${error.code}: ${error.message}` : String(error);
      return {
        item: { ...base, state: 'error', detail: why },
        ...(isFleetError(error) ? { code: error.code } : {}),
        liveSha256,
      };
    }
  }
  const classification = classify(
    { managed: liveManaged, sha256: liveSha256, writes: live.writes ?? [] },
    { source: { kind: 'commit', commit: input.repoCommit }, content: desired },
    input.index.forHost(input.variables, input.earlierVariables ?? []),
  );
  const item: DriftReportItem = {
    ...base,
    state: classification.state,
    // The state is of its block: an existing file without the block is "missing block".
    ...(target.file.kind === 'block' && live.kind === 'present' ? { block: true } : {}),
  };
  return {
    item: { ...item, ...contentDetail(classification, target, live, liveManaged, desired) },
    classification,
    liveSha256,
    liveManaged,
  };
}

/** The item's detail, version, lines and diff for a text file's classification. */
function contentDetail(
  classification: Classification,
  target: FileTarget,
  live: LiveFile,
  liveManaged: string | null,
  desired: string,
): Partial<DriftReportItem> {
  const what = live.kind === 'present' ? 'its managed block' : 'the file';
  // What an install would write, as a diff against nothing when there is nothing (a missing or
  // deleted file: `/dev/null`, as git writes it), so a plan shows the content it would create.
  const diff = unifiedDiff(liveManaged ?? '', desired, {
    from: live.kind === 'present' ? `live/${target.path}` : '/dev/null',
    to: `desired/${target.path}`,
  });
  switch (classification.state) {
    case 'current':
      return {};
    case 'missing':
      return {
        detail:
          live.kind === 'present'
            ? 'the file has no managed block (fleet never installed one here)'
            : 'the file does not exist (fleet never installed it here)',
        ...(diff === '' ? {} : { diff }),
      };
    case 'deleted':
      return {
        version: {
          kind: 'installed',
          at: classification.lastWrite.at,
          operationId: classification.lastWrite.operationId,
        },
        detail: deletedDetail(classification, what),
        ...(diff === '' ? {} : { diff }),
      };
    default:
      break;
  }
  if (classification.state === 'stale') {
    return { version: classification.equals, detail: staleDetail(classification), diff };
  }
  if (classification.state === 'modified') {
    return {
      localLines: 0,
      version: classification.comparedWith,
      deletedLines: lines(classification.deleted),
      movedLines: lines(classification.moved),
      addedLines: lines(classification.added),
      detail: modifiedDetail(classification),
      diff,
    };
  }
  const local = classification.lines;
  return {
    localLines: classification.localLines,
    lines: lines(local),
    detail: `${plural(classification.localLines, 'local line')} found in no known version (lines ${lineNumbers(local)}): ${WAYS_OUT}`,
    diff,
  };
}

/**
 * A whole file whose source is bytes (contract §10.4), classified by bytes (`classify/bytes.ts`):
 * its diff says what each side is — `binary, N bytes, sha256 …` — never its content.
 */
function assessBytes(
  input: AssessInput,
  live: Exclude<LiveFile, { kind: 'refused' }>,
  base64: string,
): FileAssessment {
  const { target } = input;
  const base = { layer: 'file' as const, domain: target.domain, path: target.path };
  const bytes = Buffer.from(base64, 'base64');
  const sha256 = sha256Hex(bytes);
  const liveSha256 = live.kind === 'present' ? live.sha256 : null;
  const classification = classifyBytes(
    { sha256: liveSha256, writes: live.writes ?? [] },
    { sha256, source: { kind: 'commit', commit: input.repoCommit } },
    (hash) => input.index.versionWithSha256(hash),
  );
  const liveSize =
    live.kind !== 'present'
      ? undefined
      : (live.size ?? (live.binary ? undefined : Buffer.byteLength(live.content)));
  const from =
    live.kind !== 'present'
      ? '/dev/null'
      : `live/${target.path}: ${liveSize === undefined ? `binary, sha256 ${live.sha256}` : describeBytes(liveSize, live.sha256)}`;
  const diff = `${from}\ndesired/${target.path}: ${describeBytes(bytes.length, sha256)}\n`;
  const item: DriftReportItem = { ...base, state: classification.state };
  const done = (extra: Partial<DriftReportItem>): FileAssessment => ({
    item: { ...item, ...extra },
    classification,
    liveSha256,
    liveManaged: null,
  });
  switch (classification.state) {
    case 'current':
      return done({});
    case 'missing':
      return done({ detail: 'the file does not exist (fleet never installed it here)', diff });
    case 'deleted':
      return done({
        version: {
          kind: 'installed',
          at: classification.lastWrite.at,
          operationId: classification.lastWrite.operationId,
        },
        detail: deletedDetail(classification, 'the file'),
        diff,
      });
    case 'stale':
      return done({ version: classification.equals, detail: staleDetail(classification), diff });
    default:
      return done({
        localLines: 0,
        version: { kind: 'commit', commit: input.repoCommit },
        detail: `a hand change: its bytes equal no known version (compared by bytes: the source is not UTF-8 text). Never replaced without --force: ${WAYS_OUT}`,
        diff,
      });
  }
}
