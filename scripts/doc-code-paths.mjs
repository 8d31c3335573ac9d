// The code-path part of the reference check (scripts/doc-references.mjs, part of `npm run lint`):
// a file or folder of the repository named in a Markdown document, as inline code
// (`packages/testkit/src/writer.ts`, `test/installer.test.ts` in a plugin's README, `docs/adr/`),
// exists. Docs that named deleted test files are what this catches (issue 41).
//
// What counts as a repository path, so that prose and commands are left alone:
// - the whole code span is one path: segments of letters, digits and `._@-`, at least one `/`,
//   optionally a trailing `/` (a folder) or `:LINE` (a place in a file);
// - its first segment is a tracked folder, resolved as a document mention is: from the document's
//   own folder, each folder above it, or the repository root — so `test/prober.test.ts` in
//   plugins/x/README.md is plugins/x/test/prober.test.ts, and `src/a.ts` in docs/ is no repository
//   path at all (docs/ has no src/), as `~/.config/fleet` or `.git/fleet-cache` are not;
// - not build output or installed code (a `dist` or `node_modules` segment): those are made by
//   `npm run build` and `npm ci`, not tracked.
// Records that describe the code as it was are not checked: an accepted ADR is not edited
// (docs/adr/README.md), nor are the changesets, nor the dated runs of bench/RESULTS.md.

/** Documents whose code paths are history, not claims about the tree. */
export const HISTORICAL_DOCUMENTS = [
  /^docs\/adr\/\d{4}-[^/]+\.md$/,
  /^\.changeset\//,
  /^bench\/RESULTS\.md$/,
];

/** A code span that is one path, with an optional `:LINE` or `:LINE-LINE` after it. */
const PATH_SPAN = /^(\.?[\w@-][\w.@-]*(?:\/[\w.@-]+)+\/?)(?::\d+(?:[-–]\d+)?)?$/;

/** Segments of paths that are made, not tracked. */
const GENERATED = new Set(['dist', 'node_modules']);

/**
 * Each code span of `markdown` (outside fenced blocks) with its offset: the text between a run of
 * backticks and the next run of the same length, on one line.
 *
 * @param {string} markdown
 * @returns {{ readonly text: string; readonly offset: number }[]}
 */
export function codeSpans(markdown) {
  const spans = [];
  let fence = null;
  let offset = 0;
  for (const line of markdown.split('\n')) {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      if (fence === null) fence = fenceMatch[1][0];
      else if (fenceMatch[1][0] === fence) fence = null;
    } else if (fence === null) {
      for (const match of line.matchAll(/(`+)([^`]+?)\1(?!`)/g)) {
        spans.push({ text: match[2].trim(), offset: offset + match.index + match[1].length });
      }
    }
    offset += line.length + 1;
  }
  return spans;
}

/**
 * The code paths of `file` that name nothing tracked: each as `{ offset, message }`.
 *
 * @param {{ readonly path: string; readonly content: string }} file a Markdown document
 * @param {{ readonly byPath: ReadonlyMap<string, unknown>; readonly directories: ReadonlySet<string> }} tree
 * @param {(dir: string, relative: string) => string | null} join a path joined, or null outside
 * @param {readonly string[]} bases the document's folder, each folder above it, and `.`
 * @returns {{ readonly offset: number; readonly message: string }[]}
 */
export function missingCodePaths(file, tree, join, bases) {
  if (HISTORICAL_DOCUMENTS.some((pattern) => pattern.test(file.path))) return [];
  const missing = [];
  for (const span of codeSpans(file.content)) {
    const match = PATH_SPAN.exec(span.text);
    if (!match) continue;
    const named = match[1];
    const segments = named.replace(/\/$/, '').split('/');
    if (segments.some((segment) => GENERATED.has(segment) || segment === '..')) continue;
    const first = segments[0];
    if (!bases.some((dir) => tree.directories.has(join(dir, first) ?? ''))) continue;
    const exists = bases.some((dir) => {
      const candidate = join(dir, named.replace(/\/$/, ''));
      if (candidate === null) return false;
      return named.endsWith('/')
        ? tree.directories.has(candidate)
        : tree.byPath.has(candidate) || tree.directories.has(candidate);
    });
    if (!exists)
      missing.push({ offset: span.offset, message: `${named}: no such tracked file or folder` });
  }
  return missing;
}
