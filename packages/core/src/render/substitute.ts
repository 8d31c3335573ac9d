import { placeholder, type PlaceholderNamespace } from './placeholder.js';
import { compareCodeUnits } from '../compare.js';

/**
 * Builds a function that replaces every occurrence of the given values by their placeholders in
 * one pass, longest value first (a value containing another is replaced whole), so the result is
 * the same whatever order the values came in. Empty values are never replaced: they would match
 * everywhere. Counts per name are added to `counts` when given. Used by adopt's reverse
 * substitution and by redaction.
 */
export function valueReplacer(
  values: Iterable<readonly [name: string, value: string]>,
  namespace: PlaceholderNamespace,
): ((text: string, counts?: Record<string, number>) => string) | undefined {
  const entries = [...values]
    .filter(([, value]) => value.length > 0)
    .sort(([an, av], [bn, bv]) => bv.length - av.length || compareCodeUnits(an, bn));
  if (entries.length === 0) return undefined;
  const byValue = new Map<string, string>();
  for (const [name, value] of entries) if (!byValue.has(value)) byValue.set(value, name);
  const pattern = new RegExp(
    [...byValue.keys()].map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'g',
  );
  return (text, counts) =>
    text.replace(pattern, (value) => {
      const name = byValue.get(value) as string;
      if (counts) counts[name] = (counts[name] ?? 0) + 1;
      return placeholder(namespace, name);
    });
}
