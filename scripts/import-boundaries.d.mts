// Types of scripts/import-boundaries.mjs, for the TypeScript test that reuses it.

export interface SourceFile {
  readonly path: string;
  readonly content: string;
}

export interface BoundaryProblem {
  readonly file: string;
  /** 1-based line of the import. */
  readonly line: number;
  readonly message: string;
}

export interface BoundaryException {
  readonly file: string;
  readonly target: string;
  readonly reason: string;
}

export const PUBLIC_ENTRIES: Readonly<Record<string, readonly string[]>>;
export const ALLOWED: Readonly<Record<string, readonly string[]>>;
export const EXCEPTIONS: readonly BoundaryException[];

export function checkBoundaries(
  files: readonly SourceFile[],
  exceptions?: readonly BoundaryException[],
): BoundaryProblem[];
export function formatProblem(problem: BoundaryProblem): string;
export function placeOf(file: string): { readonly layer: string; readonly unit: string } | null;
export function readSources(root: string): SourceFile[];
