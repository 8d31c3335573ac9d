/**
 * The repository's newest drift report (contract §3 `reports/drift/<YYYY-MM-DD>/`, §8.1), for
 * `fleet status`: the newest date directory that holds one, and in it the highest suffix
 * (`drift.json`, then `drift-2.json`, `drift-3.json`, … — never overwritten, so the highest is the
 * latest). Read from the working tree and validated like any report; a report that does not
 * validate is named with its problem, never guessed at.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseStrictJson } from '../json.js';
import { driftReportSchema, type DriftReport } from '../report/drift-report.js';

export type LatestDriftReport =
  | { readonly path: string; readonly report: DriftReport }
  | { readonly path: string; readonly problem: string }
  | null;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const REPORT = /^drift(?:-([1-9]\d*))?\.json$/;

/** The newest report's file name in a list of names (pure), `undefined` when none. */
export function newestReportName(names: readonly string[]): string | undefined {
  let best: { name: string; n: number } | undefined;
  for (const name of names) {
    const match = REPORT.exec(name);
    if (!match) continue;
    const n = match[1] === undefined ? 1 : Number(match[1]);
    if (best === undefined || n > best.n) best = { name, n };
  }
  return best?.name;
}

export async function latestDriftReport(root: string): Promise<LatestDriftReport> {
  const base = join(root, 'reports', 'drift');
  const days = (await readdir(base).catch(() => [] as string[]))
    .filter((d) => DAY.test(d))
    .sort()
    .reverse();
  for (const day of days) {
    const name = newestReportName(await readdir(join(base, day)).catch(() => [] as string[]));
    if (name === undefined) continue;
    const path = `reports/drift/${day}/${name}`;
    try {
      const value = parseStrictJson(await readFile(join(base, day, name), 'utf8'), path, 'USAGE');
      const parsed = driftReportSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return {
          path,
          problem: `${path} is not a drift report (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'bad shape'})`,
        };
      }
      return { path, report: parsed.data };
    } catch (error) {
      return { path, problem: (error as Error).message };
    }
  }
  return null;
}
