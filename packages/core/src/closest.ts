/**
 * "Did you mean …?" (contract §7): the closest of some names to a mistyped one, by edit distance
 * (insert, delete, substitute, and swap of two neighbours — the typos people make). A guess is
 * offered only when it is close: at most a third of the longer name's length, rounded up, so
 * `node-1` finds `node-01` and `alfa` finds `alpha`, but `web` does not find `node-01`. Ties go to
 * the first candidate in sorted order.
 * Twenty lines, pure: not worth a runtime dependency in every artifact.
 */

/** Optimal-string-alignment distance between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  const width = b.length + 1;
  const d = new Array<number>((a.length + 1) * width).fill(0);
  const at = (i: number, j: number): number => d[i * width + j] ?? 0;
  for (let i = 0; i <= a.length; i += 1) d[i * width] = i;
  for (let j = 0; j <= b.length; j += 1) d[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      d[i * width + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The closest candidate to `name`, or `undefined` when none is close enough to be a typo. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of [...candidates].sort()) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    const limit = Math.max(1, Math.ceil(Math.max(name.length, candidate.length) / 3));
    if (distance > limit) continue;
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  return best?.name;
}
