/**
 * The published versions of one canonical file, indexed once for the whole fleet, then viewed per
 * host (contract §14: history read once per canonical file, lines hashed once). Most lines of most
 * versions hold no host placeholder and are the same for every host: they are hashed once here,
 * and so is every version without one, whole (the index "which version is this file?" answers
 * from). Only the distinct lines that do hold a placeholder are rendered per host — a handful,
 * whatever the depth of history; a version holding one is compared line by line, rendering only
 * its templated lines, and only when a host's file is not current.
 */
import { hasLiteralBraces, scanPlaceholders, unescapeBraces } from '../render/template.js';
import type { KnownSet, VersionSource } from './classify.js';
import { splitLines } from './classify.js';
import type { CanonicalVersion } from './history.js';
import { sha256Hex, versionBytes } from './bytes.js';

const HOST_PLACEHOLDER = /\{\{\s*host\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}/;

/** Renders host placeholders in a line (or a whole text), `undefined` when a variable is absent. */
function renderLine(line: string, variables: Readonly<Record<string, string>>): string | undefined {
  let out = '';
  let last = 0;
  for (const ph of scanPlaceholders(line).placeholders) {
    if (ph.namespace !== 'host') continue;
    if (!Object.hasOwn(variables, ph.name)) return undefined;
    out += unescapeBraces(line.slice(last, ph.start)) + (variables[ph.name] as string);
    last = ph.end;
  }
  return out + unescapeBraces(line.slice(last));
}

interface IndexedVersion {
  /** Position in the history, newest first. */
  readonly position: number;
  readonly source: VersionSource;
  readonly content: string;
  readonly lines: readonly string[];
  /** Which lines hold a host placeholder (`null`: none does). */
  readonly templated: ReadonlySet<number> | null;
}

type Variables = Readonly<Record<string, string>>;

/** The index proper, built from the versions on first use. */
interface Built {
  readonly staticLines: ReadonlySet<string>;
  readonly templateLines: ReadonlySet<string>;
  readonly versionsList: readonly IndexedVersion[];
  /** Versions without a host placeholder, by their lines joined (the newest of equal ones). */
  readonly staticWhole: ReadonlyMap<string, IndexedVersion>;
  readonly templatedVersions: readonly IndexedVersion[];
}

function buildIndex(versions: readonly CanonicalVersion[]): Built {
  const staticLines = new Set<string>();
  const templateLines = new Set<string>();
  const versionsList: IndexedVersion[] = [];
  const staticWhole = new Map<string, IndexedVersion>();
  const templatedVersions: IndexedVersion[] = [];
  for (const version of versions) {
    const lines = splitLines(version.content);
    let templated: Set<number> | null = null;
    for (let i = 0; i < lines.length; i += 1) {
      const line = lines[i] as string;
      // Most lines recur from version to version: a set lookup, the pattern only for new ones.
      if (staticLines.has(line)) continue;
      if (templateLines.has(line) || HOST_PLACEHOLDER.test(line) || hasLiteralBraces(line)) {
        templateLines.add(line);
        (templated ??= new Set()).add(i);
      } else {
        staticLines.add(line);
      }
    }
    const source: VersionSource = { kind: 'commit', commit: version.commit, date: version.date };
    const indexed: IndexedVersion = {
      position: versionsList.length,
      source,
      content: version.content,
      lines,
      templated,
    };
    versionsList.push(indexed);
    if (indexed.templated === null) {
      const key = lines.join('\n');
      if (!staticWhole.has(key)) staticWhole.set(key, indexed);
    } else {
      templatedVersions.push(indexed);
    }
  }
  return { staticLines, templateLines, versionsList, staticWhole, templatedVersions };
}

export class HistoryIndex {
  private index: Built | undefined;
  private source: (() => readonly CanonicalVersion[]) | undefined;
  private raw: (() => readonly CanonicalVersion[]) | undefined;
  private bySha256: Map<string, VersionSource> | undefined;

  /**
   * `versions` newest first (as `readCanonicalHistory` returns them), or a function returning
   * them: called once, when the index is first asked something — a current, missing or deleted
   * file never asks (classify), so a drift whose files are all current indexes no history.
   */
  constructor(
    versions: readonly CanonicalVersion[] | (() => readonly CanonicalVersion[]),
    /**
     * The versions as the repository holds them (text or base64 bytes), for a file compared by
     * bytes (`classify/bytes.ts`): asked only by {@link versionWithSha256}.
     */
    raw?: () => readonly CanonicalVersion[],
  ) {
    if (typeof versions === 'function') this.source = versions;
    else this.index = buildIndex(versions);
    this.raw = raw ?? (typeof versions === 'function' ? versions : () => versions);
  }

  /** The newest published version whose bytes have this sha256, for a file compared by bytes. */
  versionWithSha256(sha256: string): VersionSource | undefined {
    if (this.bySha256 === undefined) {
      this.bySha256 = new Map();
      for (const version of this.raw?.() ?? []) {
        const hash = sha256Hex(versionBytes(version));
        if (!this.bySha256.has(hash)) {
          this.bySha256.set(hash, { kind: 'commit', commit: version.commit, date: version.date });
        }
      }
      this.raw = undefined;
    }
    return this.bySha256.get(sha256);
  }

  private built(): Built {
    if (this.index === undefined) {
      this.index = buildIndex(this.source?.() ?? []);
      this.source = undefined;
    }
    return this.index;
  }

  /** Number of distinct versions indexed. */
  get size(): number {
    return this.built().versionsList.length;
  }

  /**
   * The known set of one host: every indexed version rendered with `variables` — and with each
   * earlier set of the host's variables (`hosts/<host>.yaml` as it was in the repo's history: a
   * node-id change leaves the old id's rendering known, not local).
   */
  forHost(variables: Variables, earlierVariables: readonly Variables[] = []): KnownSet {
    const variableSets = [variables, ...earlierVariables];
    const index = (): Built => this.built();
    // Each distinct templated line rendered for this host once, per variable set — on first use:
    // a current file (most of them) never asks.
    let renderedBySet: Map<string, string | undefined>[] | undefined;
    let rendered: Set<string> | undefined;
    const render = (): Map<string, string | undefined>[] => {
      if (renderedBySet === undefined) {
        renderedBySet = variableSets.map((set) => {
          const out = new Map<string, string | undefined>();
          for (const line of index().templateLines) out.set(line, renderLine(line, set));
          return out;
        });
        rendered = new Set<string>();
        for (const map of renderedBySet) {
          for (const value of map.values()) if (value !== undefined) rendered.add(value);
        }
      }
      return renderedBySet;
    };
    const lineWith = (version: IndexedVersion, i: number, set: number): string | undefined =>
      version.templated?.has(i) ? render()[set]?.get(version.lines[i] as string) : version.lines[i];
    const renderedLines = (version: IndexedVersion, set: number): string[] | undefined => {
      const out = version.lines.slice();
      for (const i of version.templated ?? []) {
        const line = render()[set]?.get(out[i] as string);
        if (line === undefined) return undefined;
        out[i] = line;
      }
      return out;
    };
    const contentWith = (version: IndexedVersion, set: number): string =>
      renderLine(version.content, variableSets[set] as Variables) ?? '';
    return {
      has: (line) => {
        if (index().staticLines.has(line)) return true;
        render();
        return rendered?.has(line) === true;
      },
      versionEqualTo: (lines) => {
        const { staticWhole, templatedVersions: templated } = index();
        const whole = staticWhole.get(lines.join('\n'));
        // Newest first: a templated version newer than the static match wins.
        for (const version of templated) {
          if (whole && version.position > whole.position) break;
          if (version.lines.length !== lines.length) continue;
          // A static line that differs rules the version out before anything is rendered.
          if (!version.lines.every((line, i) => version.templated?.has(i) || line === lines[i])) {
            continue;
          }
          for (let set = 0; set < variableSets.length; set += 1) {
            if (lines.every((line, i) => lineWith(version, i, set) === line)) {
              return { source: version.source, content: contentWith(version, set) };
            }
          }
        }
        return whole ? { source: whole.source, content: whole.content } : undefined;
      },
      *versions() {
        for (const version of index().versionsList) {
          if (version.templated === null) {
            yield { source: version.source, lines: version.lines };
            continue;
          }
          for (let set = 0; set < variableSets.length; set += 1) {
            const lines = renderedLines(version, set);
            if (lines === undefined) continue;
            yield { source: version.source, lines };
            break;
          }
        }
      },
    };
  }
}
