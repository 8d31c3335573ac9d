#!/usr/bin/env node
// The file-circle check (docs/architecture.md, "Boundaries"): inside each package, no source file
// imports, directly or through others, a file that imports it back. A circle makes the order
// modules are evaluated in depend on which one is loaded first (a value read before its module
// has run is `undefined` or a TDZ error) and ties files that cannot then be read, tested or moved
// one at a time. Between packages the layers of scripts/import-boundaries.mjs already forbid any
// import that runs back up.
//
// Every relative import counts: static imports, `export … from`, `import type` (a type-only
// circle is still two files that cannot be understood apart) and `import('literal')`. Imports are
// read with TypeScript's `preProcessFile`, as the boundary check reads them. `findCycles` is pure
// (files in, circles out), tested with a table of cases (test/integration/import-cycles.test.ts);
// run as a script (part of `npm run lint`) it prints each circle as `a.ts → b.ts → a.ts` and
// exits 1 if there is any.
//
// Core's folders are layers too (docs/architecture.md, "Core's folders"): `findFolderProblems`
// refuses a circle between two folders of packages/core/src even when no two files close it (a
// folder that imports another that imports it back cannot be moved or understood on its own), and
// any import from `schemas/`, the ground every folder may read, into a folder. Each problem names
// the file edges that make it.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { readSources } from './import-boundaries.mjs';

/**
 * @typedef {{ readonly path: string; readonly content: string }} SourceFile
 */

const SOURCE = /\.(ts|mts|cts|tsx)$/;

/** The source file a relative specifier of `from` names (`./a.js` → `dir/a.ts`), or `null`. */
function resolve(from, specifier, known) {
  if (!specifier.startsWith('.')) return null;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const stem = joined.replace(/\.(m|c)?js$/, '');
  for (const candidate of [
    `${stem}.ts`,
    `${stem}.mts`,
    `${stem}.cts`,
    `${stem}.tsx`,
    joined,
    `${joined}/index.ts`,
  ]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/** file → the files it imports (sorted, so that circles are reported in a stable order). */
export function importGraph(files) {
  const sources = files.filter((f) => SOURCE.test(f.path) && !f.path.endsWith('.d.ts'));
  const known = new Set(sources.map((f) => f.path));
  const graph = new Map();
  for (const { path: file, content } of sources) {
    const targets = new Set();
    for (const imported of ts.preProcessFile(content, true, true).importedFiles) {
      const target = resolve(file, imported.fileName, known);
      if (target !== null) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The circles among `files` (pure): each strongly connected set of more than one file, or a file
 * importing itself, as one path through it that returns to its start.
 *
 * @param {readonly SourceFile[]} files
 * @returns {string[][]}
 */
export function findCycles(files) {
  const graph = importGraph(files);
  return stronglyConnected(graph)
    .filter((set) => set.length > 1 || (graph.get(set[0]) ?? []).includes(set[0]))
    .map((set) => circleThrough(graph, new Set(set)))
    .sort((a, b) => a[0].localeCompare(b[0]));
}

/** Tarjan's strongly connected components, iteratively (no recursion limit on long chains). */
function stronglyConnected(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const sets = [];
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next);
    next += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge];
        frame.edge += 1;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next);
          next += 1;
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(to)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const set = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          set.push(member);
        } while (member !== frame.node);
        sets.push(set.sort());
      }
    }
  }
  return sets;
}

/** One circle inside a strongly connected set: a shortest way from its first file back to it. */
function circleThrough(graph, set) {
  const start = [...set].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of graph.get(node) ?? []) {
      if (!set.has(to)) continue;
      if (to === start) {
        const way = [start];
        for (let at = node; at !== start; at = previous.get(at)) way.splice(1, 0, at);
        return [...way, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

// ---- core's folders --------------------------------------------------------------------------

/** Core's source folder: its sub-folders are the layers `findFolderProblems` orders. */
const CORE_SOURCE = 'packages/core/src/';
/** The ground folder: every folder may import it, and it imports no folder. */
const GROUND = 'schemas';

/** The folder of core a file sits in (`cache` for `packages/core/src/cache/store.ts`), or null. */
function coreFolderOf(file) {
  if (!file.startsWith(CORE_SOURCE)) return null;
  const parts = file.slice(CORE_SOURCE.length).split('/');
  return parts.length > 1 ? parts[0] : null;
}

/**
 * folder → folder it imports → the first file edge that does (`cache/checks.ts imports
 * interfaces/domain.ts`), over core's folders only: a root file such as `zod.ts` is no folder.
 */
export function coreFolderGraph(files) {
  const edges = new Map();
  for (const [file, targets] of importGraph(files)) {
    const from = coreFolderOf(file);
    if (from === null) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    for (const target of targets) {
      const to = coreFolderOf(target);
      if (to === null || to === from || edges.get(from).has(to)) continue;
      const shown = (name) => name.slice(CORE_SOURCE.length);
      edges.get(from).set(to, `${shown(file)} imports ${shown(target)}`);
    }
  }
  return edges;
}

/**
 * What breaks the order of core's folders (pure): each circle of folders, as one way through it
 * with the file edge behind each step, and each import of `schemas/` into another folder.
 *
 * @param {readonly SourceFile[]} files
 * @returns {string[]}
 */
export function findFolderProblems(files) {
  const edges = coreFolderGraph(files);
  const graph = new Map([...edges].map(([from, to]) => [from, [...to.keys()].sort()]));
  const problems = [];
  for (const set of stronglyConnected(graph).filter((members) => members.length > 1)) {
    const circle = circleThrough(graph, new Set(set));
    const steps = circle.slice(1).map((to, i) => edges.get(circle[i]).get(to));
    problems.push(`core folder circle: ${circle.join(' → ')} (${steps.join('; ')})`);
  }
  for (const [to, edge] of [...(edges.get(GROUND) ?? new Map())].sort()) {
    problems.push(`core's ${GROUND}/ imports the folder ${to}/: ${edge} (${GROUND}/ imports none)`);
  }
  return problems;
}

// ---- the script ---------------------------------------------------------------------------------

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const sources = readSources(root);
  const cycles = findCycles(sources);
  for (const cycle of cycles) console.log(`import circle: ${cycle.join(' → ')}`);
  if (cycles.length > 0) {
    console.log(`import-cycles: ${cycles.length} circle(s) of files importing each other`);
    process.exitCode = 1;
  }
  const folderProblems = findFolderProblems(sources);
  for (const problem of folderProblems) console.log(problem);
  if (folderProblems.length > 0) {
    console.log(
      `import-cycles: ${folderProblems.length} problem(s) in the order of core's folders`,
    );
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main();
}
