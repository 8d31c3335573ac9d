/** Unified diffs, from the `diff` library (jsdiff). Inputs are already redacted. */
import { createRequire } from 'node:module';

type DiffLibrary = typeof import('diff');
let diffModule: DiffLibrary | undefined;

/**
 * The diff library, loaded on first use (its CommonJS build, synchronously): only a file that
 * differs needs it, and a drift of current files never does (contract §14: diffs only for what
 * differs; the CLI loads what the verb needs).
 */
export function diffLibrary(): DiffLibrary {
  return (diffModule ??= createRequire(import.meta.url)('diff') as DiffLibrary);
}

export interface DiffOptions {
  /** Label of the old side (`a/~/.config/router/router.yaml`). */
  readonly from: string;
  readonly to: string;
  readonly context?: number;
}

/** A unified diff of two texts; the empty string when they are equal. */
export function unifiedDiff(before: string, after: string, options: DiffOptions): string {
  if (before === after) return '';
  return diffLibrary()
    .createTwoFilesPatch(options.from, options.to, before, after, undefined, undefined, {
      context: options.context ?? 3,
    })
    .split('\n')
    .filter((line) => !line.startsWith('==='))
    .join('\n');
}
