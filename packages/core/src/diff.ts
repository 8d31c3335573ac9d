/** Unified diffs, from the `diff` library (jsdiff). Inputs are already redacted. */
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
