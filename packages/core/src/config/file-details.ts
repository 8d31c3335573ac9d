/**
 * The words of a file item's detail (contract §8.2): a known version, and what a stale, modified
 * or deleted file is and what gets it out of that state. One place for the words that the text
 * and the bytes assessments (file-items.ts) both use.
 */
import type { Classification, LocalLine, VersionSource } from '../classify/classify.js';

/** A known version in words: a commit, or fleet's own write. */
export function describeVersion(source: VersionSource): string {
  return source.kind === 'commit'
    ? `commit ${source.commit.slice(0, 12)}${source.date ? ` (${source.date})` : ''}`
    : `the content fleet installed at ${source.at} (operation ${source.operationId})`;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const lineNumbers = (lines: readonly LocalLine[]) =>
  `${lines
    .slice(0, 10)
    .map((l) => l.line)
    .join(', ')}${lines.length > 10 ? ', …' : ''}`;

/** The ways out of a refused file, named in the item and in install's refusal. */
export const WAYS_OUT =
  'keep it with `fleet config adopt` (`--promote` makes it the canonical), or overwrite it with `--force`';

export function staleDetail(classification: Extract<Classification, { state: 'stale' }>): string {
  const endings = classification.lineEndingsOnly ? ' except for its line endings' : '';
  return `equals the known version ${describeVersion(classification.equals)}${endings}; safe to replace`;
}

export function modifiedDetail(
  classification: Extract<Classification, { state: 'modified' }>,
): string {
  const { deleted, moved, added } = classification;
  const parts = [
    deleted.length > 0 ? `${plural(deleted.length, 'line')} deleted (${lineNumbers(deleted)})` : '',
    moved.length > 0 ? `${plural(moved.length, 'line')} moved (${lineNumbers(moved)})` : '',
    added.length > 0
      ? `${plural(added.length, 'known line')} added, repeated or from another version (${lineNumbers(added)})`
      : '',
  ].filter(Boolean);
  return `a hand change: every line is known but the whole equals no known version; against ${describeVersion(classification.comparedWith)}: ${parts.join(', ') || 'reordered'}. Never replaced without --force: ${WAYS_OUT}`;
}

export function deletedDetail(
  classification: Extract<Classification, { state: 'deleted' }>,
  what: string,
): string {
  const { lastWrite } = classification;
  return `fleet installed it here (operation ${lastWrite.operationId}, ${lastWrite.at}) and ${what} no longer exists: someone removed it. Never recreated by reconcile; \`fleet config install --force\` recreates it`;
}
