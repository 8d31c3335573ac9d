/**
 * The published versions of one canonical file, indexed once for the whole fleet, then viewed per
 * host (contract §14: history read once per canonical file, lines hashed once). Most lines of most
 * versions hold no host placeholder and are the same for every host: they are hashed once here.
 * Only the distinct lines that do hold one are rendered per host — a handful, whatever the depth
 * of history. Whole versions are rendered per host only when asked which version a stale file
 * equals.
 */
import { scanPlaceholders } from '../render/template.js';
import type { PublishedVersion, PublishedSet, VersionSource } from './classify.js';
import { splitLines } from './classify.js';
import type { CanonicalVersion } from './history.js';

const HOST_PLACEHOLDER = /\{\{\s*host\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}/;

/** Renders host placeholders in a line (or a whole text), `undefined` when a variable is absent. */
function renderLine(line: string, variables: Readonly<Record<string, string>>): string | undefined {
  let out = '';
  let last = 0;
  for (const ph of scanPlaceholders(line).placeholders) {
    if (ph.namespace !== 'host') continue;
    if (!Object.hasOwn(variables, ph.name)) return undefined;
    out += line.slice(last, ph.start) + (variables[ph.name] as string);
    last = ph.end;
  }
  return out + line.slice(last);
}

interface IndexedVersion {
  readonly source: VersionSource;
  readonly content: string;
  readonly lines: readonly string[];
  readonly templated: boolean;
}

export class HistoryIndex {
  private readonly staticLines = new Set<string>();
  private readonly templateLines = new Set<string>();
  private readonly versions: IndexedVersion[] = [];

  /** `versions` newest first (as `readCanonicalHistory` returns them). */
  constructor(versions: readonly CanonicalVersion[]) {
    for (const version of versions) {
      const lines = splitLines(version.content);
      let templated = false;
      for (const line of lines) {
        if (HOST_PLACEHOLDER.test(line)) {
          this.templateLines.add(line);
          templated = true;
        } else {
          this.staticLines.add(line);
        }
      }
      const source: VersionSource = { kind: 'commit', commit: version.commit, date: version.date };
      this.versions.push({ source, content: version.content, lines, templated });
    }
  }

  /** Number of distinct versions indexed. */
  get size(): number {
    return this.versions.length;
  }

  /**
   * The published set for one host: every indexed version rendered with `variables` — and with
   * each earlier set of the host's variables (`hosts/<host>.yaml` as it was in the repo's
   * history: a node-id change leaves the old id published) — plus the backups the node holds of
   * this file (already redacted, so compared as they are).
   */
  forHost(
    variables: Readonly<Record<string, string>>,
    backups: readonly PublishedVersion[] = [],
    earlierVariables: readonly Readonly<Record<string, string>>[] = [],
  ): PublishedSet {
    const variableSets = [variables, ...earlierVariables];
    const rendered = new Set<string>();
    for (const line of this.templateLines) {
      for (const set of variableSets) {
        const out = renderLine(line, set);
        if (out !== undefined) rendered.add(out);
      }
    }
    const backupLines = new Set<string>();
    const backupVersions = new Map<string, PublishedVersion>();
    for (const backup of backups) {
      const lines = splitLines(backup.content);
      for (const line of lines) backupLines.add(line);
      if (!backupVersions.has(lines.join('\n'))) backupVersions.set(lines.join('\n'), backup);
    }
    return {
      has: (line) => this.staticLines.has(line) || rendered.has(line) || backupLines.has(line),
      versionEqualTo: (lines) => {
        const key = lines.join('\n');
        for (const version of this.versions) {
          if (version.lines.length !== lines.length) continue;
          if (!version.templated) {
            if (version.lines.join('\n') === key) {
              return { source: version.source, content: version.content };
            }
            continue;
          }
          for (const set of variableSets) {
            const renderedLines = version.lines.map((line) =>
              HOST_PLACEHOLDER.test(line) ? renderLine(line, set) : line,
            );
            if (renderedLines.every((line, i) => line === lines[i])) {
              return { source: version.source, content: renderLine(version.content, set) ?? '' };
            }
          }
        }
        return backupVersions.get(key);
      },
    };
  }
}
