/**
 * What a schedule writes never shows up as the operator's own change (docs/scheduled-reports.md
 * "Where the reports land"): the dated reports and `runs.log` stay in the repository's `reports/`
 * — where `fleet status` and the operator look — and git ignores them. `fleet init` commits a
 * `.gitignore` holding {@link REPORT_IGNORE_LINES}; a repository made before, or without them,
 * gets them in its own `.git/info/exclude` when a schedule is installed or runs: a file of this
 * checkout only, so ignoring them is never itself a change to commit.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { createGit, REPORT_IGNORE_LINES } from '@fleet/core';
import { writeFileAtomic } from '../fs/atomic.js';

/** A path under each line, asked of `git check-ignore` (a folder's pattern matches what is in it). */
const PROBES: Readonly<Record<string, string>> = {
  '/reports/drift/': 'reports/drift/2000-01-01/drift.json',
  '/reports/version/': 'reports/version/2000-01-01/version.json',
  '/reports/runs.log': 'reports/runs.log',
};

/** `text` with `lines` appended, each on its own line, under a comment saying why (pure). */
export function withIgnoreLines(text: string, lines: readonly string[]): string {
  if (lines.length === 0) return text;
  const base = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  return `${base}# fleet schedule: reports and runs.log are evidence, not desired state\n${lines.join('\n')}\n`;
}

export interface IgnoreResult {
  /** The file the lines were added to (`null`: git ignored them all already). */
  readonly file: string | null;
  readonly added: readonly string[];
}

/** Adds to `.git/info/exclude` the lines git does not already honour (through any ignore file). */
export async function ensureReportsIgnored(root: string): Promise<IgnoreResult> {
  const git = createGit(root);
  const missing: string[] = [];
  for (const line of REPORT_IGNORE_LINES) {
    const probe = PROBES[line] ?? line.slice(1);
    const asked = await git.run(['check-ignore', '--no-index', '-q', probe], {
      allowFailure: true,
    });
    if (asked.exitCode === 1) missing.push(line);
    else if (asked.exitCode !== 0) {
      await git.run(['check-ignore', '--no-index', '-q', probe]); // the error, named
    }
  }
  if (missing.length === 0) return { file: null, added: [] };
  // exclude's patterns are anchored at the work tree's top, which may lie above fleet.yaml.
  const prefix = (await git.run(['rev-parse', '--show-prefix'])).stdout.trim();
  const lines = missing.map((line) => `/${prefix}${line.slice(1)}`);
  const named = (await git.run(['rev-parse', '--git-path', 'info/exclude'])).stdout.trim();
  const file = isAbsolute(named) ? named : join(root, named);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  await mkdir(dirname(file), { recursive: true });
  const present = new Set(text.split('\n'));
  const added = lines.filter((line) => !present.has(line));
  if (added.length > 0) await writeFileAtomic(file, withIgnoreLines(text, added));
  return { file: added.length > 0 ? file : null, added };
}
