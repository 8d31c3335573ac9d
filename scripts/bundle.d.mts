// Types of scripts/bundle.mjs, for the TypeScript test that reuses it.

/** Where each dynamic `import(…)` call of a script's text starts (TypeScript's parser). */
export function dynamicImportStarts(text: string): Promise<number[]>;

/** One edit of an oclif file in the bundle: an exact text found once, and what replaces it. */
export interface OclifEdit {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
}

/** A name in `oclif.plugins` that minimatch would read as more than itself (the second edit). */
export const GLOB_SPECIAL: RegExp;

/** The edits of oclif's start-up the bundle step makes (docs/adr/0015-two-edits-of-oclif-start-up.md). */
export const OCLIF_EDITS: readonly OclifEdit[];

/** `text` with `edit` applied; throws, naming the file, when its text is not there exactly once. */
export function applyEdit(text: string, edit: OclifEdit): string;
