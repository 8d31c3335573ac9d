/**
 * Ordering for names, identifiers and paths: by UTF-16 code units, the order of `Array.prototype
 * .sort()` without a comparator. Not `localeCompare`: its order follows the process's locale and
 * ICU version, so two nodes could sort the same names differently, and its first call loads ICU's
 * collation data — 2 MiB of the controller's resident memory, which contract §14 bounds.
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
