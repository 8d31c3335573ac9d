// Types of scripts/doc-references.mjs, for the TypeScript test that reuses it.

export interface TrackedFile {
  readonly path: string;
  readonly content: string;
}

export interface ReferenceProblem {
  readonly file: string;
  /** 1-based line of the reference. */
  readonly line: number;
  readonly message: string;
}

export interface CatalogueIndex {
  readonly sections: ReadonlySet<string>;
  /** Group letter → its title. */
  readonly groups: ReadonlyMap<string, string>;
  /** Case number → the group letter it sits under (`null`: under none). */
  readonly cases: ReadonlyMap<number, string | null>;
}

export const CONTRACT_DOC: 'docs/contract.md';
export const RELIABILITY_DOC: 'docs/reliability.md';
export const SELF_FILES: readonly string[];

export function checkReferences(files: readonly TrackedFile[]): ReferenceProblem[];
export function formatProblem(problem: ReferenceProblem): string;
export function contractSections(markdown: string): Set<string>;
export function catalogueIndex(markdown: string): CatalogueIndex;
export function anchorsOf(markdown: string): Set<string>;
export function readTrackedFiles(root: string): TrackedFile[];
