/**
 * Writes a set of report files into a directory without ever overwriting an earlier report: the
 * first set is `drift.json`, `drift.md`, `drift.html`; the next in the same directory
 * `drift-2.*`, then `drift-3.*`. Files are created exclusively (O_EXCL), so two runs racing for
 * the same suffix cannot overwrite each other either.
 */
import { mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What a schedule writes, in .gitignore syntax (anchored at the repository's root): the dated
 * reports and `runs.log` are evidence, not desired state, and never show up as the operator's own
 * changes (docs/scheduled-reports.md). `fleet init` commits them in `.gitignore`; `fleet schedule`
 * adds them to an older repository's `.git/info/exclude`.
 */
export const REPORT_IGNORE_LINES: readonly string[] = [
  '/reports/drift/',
  '/reports/version/',
  '/reports/runs.log',
];

/** `reports/<kind>/<YYYY-MM-DD>` (UTC) inside the repository: where scheduled reports go. */
export function datedReportDir(root: string, kind: 'drift' | 'version', now: Date): string {
  return join(root, 'reports', kind, now.toISOString().slice(0, 10));
}

/**
 * Writes `files` (extension → content) as `<base>[-N].<ext>` with the lowest free N for the whole
 * set. Returns the paths written.
 */
export async function writeReportSet(
  dir: string,
  base: string,
  files: Readonly<Record<string, string>>,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  for (let n = 1; n < 10_000; n += 1) {
    const stem = n === 1 ? base : `${base}-${n}`;
    const written: string[] = [];
    try {
      for (const [ext, content] of Object.entries(files)) {
        const path = join(dir, `${stem}.${ext}`);
        const handle = await open(path, 'wx', 0o644);
        written.push(path);
        try {
          await handle.writeFile(content);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
      return written;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Part of this set was taken: undo what this attempt created and try the next suffix.
      await Promise.all(written.map((path) => unlink(path).catch(() => undefined)));
    }
  }
  throw new Error(`no free report name in ${dir}`);
}
