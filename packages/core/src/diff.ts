/** Unified diffs, from the `diff` library (jsdiff). Inputs are already redacted. */
// Imported statically: inside core's bundle jsdiff is a few kilobytes of the chunk that needs it,
// where loading the package by name on first use cost its 19 CommonJS modules whenever a file
// differed (contract §14: the CLI loads what the verb needs; docs/adr/0011-core-ships-a-bundle.md).
import { createTwoFilesPatch } from 'diff';

export interface DiffOptions {
  /** Label of the old side (`a/~/.config/router/router.yaml`). */
  readonly from: string;
  readonly to: string;
  readonly context?: number;
}

/** A unified diff of two texts; the empty string when they are equal. */
export function unifiedDiff(before: string, after: string, options: DiffOptions): string {
  if (before === after) return '';
  return createTwoFilesPatch(options.from, options.to, before, after, undefined, undefined, {
    context: options.context ?? 3,
  })
    .split('\n')
    .filter((line) => !line.startsWith('==='))
    .join('\n');
}
