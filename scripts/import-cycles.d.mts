// Types of scripts/import-cycles.mjs, for the TypeScript test that reuses it.
import type { SourceFile } from './import-boundaries.mjs';

export function importGraph(files: readonly SourceFile[]): Map<string, string[]>;
export function findCycles(files: readonly SourceFile[]): string[][];
export function coreFolderGraph(files: readonly SourceFile[]): Map<string, Map<string, string>>;
export function findFolderProblems(files: readonly SourceFile[]): string[];
