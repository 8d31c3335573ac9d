/**
 * One file target's drift item (layer `file`), pure: the live file as the node exported it
 * (redacted) is reduced to its managed part by the domain's installer and classified against the
 * desired view and the published versions (contract §8.2). A diff is computed only for what differs.
 */
import type { HistoryIndex } from '../classify/history-index.js';
import { classify, type Classification, type VersionSource } from '../classify/classify.js';
import { unifiedDiff } from '../diff.js';
import { isFleetError } from '../errors.js';
import type { DriftReportItem } from '../report/drift-report.js';
import type { FileTarget, OperatorHalf } from './targets.js';

/** The live state of one file, as the node reported it. */
export type LiveFile =
  | { readonly kind: 'absent' }
  | {
      readonly kind: 'present';
      /** Redacted content (secret values already back to placeholders). */
      readonly content: string;
      readonly sha256: string;
      /** Redacted contents of the backups the node holds of this file. */
      readonly backups: readonly { readonly path: string; readonly content: string }[];
    }
  | { readonly kind: 'refused'; readonly code: string; readonly message: string };

const UNSUPPORTED_CODES = new Set([
  'FORMAT_UNSUPPORTED',
  'ENCODING_INVALID',
  'FILE_TOO_LARGE',
  'NOT_REGULAR_FILE',
  'SYMLINK_REFUSED',
]);

export interface FileAssessment {
  readonly item: DriftReportItem;
  readonly classification?: Classification;
  /** The live sha256 the assessment was made against (`null`: absent). */
  readonly liveSha256: string | null;
  /** The live managed part (template space), for plans. */
  readonly liveManaged?: string | null;
}

function describeSource(source: VersionSource): string {
  return source.kind === 'commit'
    ? `commit ${source.commit.slice(0, 12)}${source.date ? ` (${source.date})` : ''}`
    : `the backup ${source.path}`;
}

function staleDetail(classification: Extract<Classification, { state: 'stale' }>): string {
  const endings = classification.lineEndingsOnly ? ' except for line endings' : '';
  return classification.equals
    ? `equals the published ${describeSource(classification.equals)}${endings}; safe to replace`
    : classification.lineEndingsOnly
      ? 'equals the desired content except for line endings; safe to replace'
      : 'equals no published version, but every line of it was published (a recombination or a local deletion); safe to replace';
}

export interface AssessInput {
  readonly target: FileTarget;
  readonly live: LiveFile;
  readonly operator: OperatorHalf;
  readonly index: HistoryIndex;
  readonly variables: Readonly<Record<string, string>>;
  /** The host's earlier variable sets (see `HistoryIndex.forHost`). */
  readonly earlierVariables?: readonly Readonly<Record<string, string>>[];
}

/** Classifies one file target and builds its drift item. */
export function assessFile(input: AssessInput): FileAssessment {
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
      liveSha256,
    };
  }
  const desired = target.desired.content;
  if (live.kind === 'refused') {
    const state = UNSUPPORTED_CODES.has(live.code) ? 'unsupported' : 'error';
    return { item: { ...base, state, detail: `${live.code}: ${live.message}` }, liveSha256 };
  }
  let liveManaged: string | null = null;
  const backups: { source: VersionSource; content: string }[] = [];
  if (live.kind === 'present') {
    try {
      liveManaged = operator.managed(target.file, live.content);
    } catch (error) {
      const why = isFleetError(error) ? `${error.code}: ${error.message}` : String(error);
      return { item: { ...base, state: 'error', detail: why }, liveSha256 };
    }
    for (const backup of live.backups) {
      try {
        const content = operator.managed(target.file, backup.content);
        if (content !== null)
          backups.push({ source: { kind: 'backup', path: backup.path }, content });
      } catch {
        // A damaged backup is not a published version.
      }
    }
  }
  const classification = classify(
    liveManaged,
    desired,
    input.index.forHost(input.variables, backups, input.earlierVariables ?? []),
  );
  const item: DriftReportItem = { ...base, state: classification.state };
  if (classification.state === 'missing') {
    return {
      item: {
        ...item,
        detail:
          live.kind === 'present' ? 'the file has no managed block' : 'the file does not exist',
      },
      classification,
      liveSha256,
      liveManaged,
    };
  }
  if (classification.state === 'current') return { item, classification, liveSha256, liveManaged };
  const diff = unifiedDiff(liveManaged ?? '', desired, {
    from: `live/${target.path}`,
    to: `desired/${target.path}`,
  });
  if (classification.state === 'stale') {
    return {
      item: { ...item, detail: staleDetail(classification), diff },
      classification,
      liveSha256,
      liveManaged,
    };
  }
  const lines = classification.lines;
  return {
    item: {
      ...item,
      localLines: classification.localLines,
      lines: lines.map((l) => ({ line: l.line, text: l.text })),
      detail: `${classification.localLines} local line${classification.localLines === 1 ? '' : 's'} found in no published version (lines ${lines
        .slice(0, 10)
        .map((l) => l.line)
        .join(
          ', ',
        )}${lines.length > 10 ? ', …' : ''}): adopt them with \`fleet config adopt\` or overwrite with \`--force\``,
      diff,
    },
    classification,
    liveSha256,
    liveManaged,
  };
}
