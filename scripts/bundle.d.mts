// Types of scripts/bundle.mjs, for the TypeScript test that reuses it.

/** Where each dynamic `import(…)` call of a script's text starts (TypeScript's parser). */
export function dynamicImportStarts(text: string): Promise<number[]>;
