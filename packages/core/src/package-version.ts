/**
 * This `@fleet/core`'s own version, from its package.json. Its modules run from two layouts — the
 * compiled files under `dist/src/` (core's own tests) and the bundle under `dist/bundle/` that
 * every importer loads (docs/contract.md §14, scripts/bundle.mjs) — so the file is found by
 * walking up from the running module to the package.json named `@fleet/core`, not at a depth
 * fixed at compile time.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = '@fleet/core';
let version: string | undefined;

export function corePackageVersion(): string {
  if (version !== undefined) return version;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const found = readPackage(join(dir, 'package.json'));
    if (found?.name === PACKAGE_NAME && typeof found.version === 'string') {
      return (version = found.version);
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${PACKAGE_NAME}: no package.json above ${dir}`);
    dir = parent;
  }
}

function readPackage(file: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}
