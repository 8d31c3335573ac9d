#!/usr/bin/env node
// The import-boundary check (docs/architecture.md, "Boundaries"): each package's sources import
// only what their layer may use, so a plugin can change without the CLI, and core without
// anything above it.
//
//   core        nothing of fleet's own (it is the bottom layer)
//   testkit     core and the controller (its fake hosts write through the controller's writer)
//   controller  core only (plugins reach it through the registry)
//   a plugin    core only: never another plugin, the controller, the CLI or the testkit
//   lab         core and the controller
//   operator    core and the controller (the services behind the CLI's commands)
//   resident    core only (the resident operator process: the CLI hands it what it needs of oclif)
//   the CLI     core, the controller, the lab, the operator services and the resident; a plugin
//               only through the registry, never by import
//
// and nobody reaches into another package's files (`@fleet/x/dist/…`, `../../plugins/…`): a
// package is used through its `exports`. Only `src/` is checked: tests may use the testkit and
// run a real controller.
//
// Imports are read with TypeScript's `preProcessFile`: static imports, `export … from`, `import
// type` and `import('literal')` alike. An `import()` of anything but a literal is refused: what
// it loads is invisible to tsc and to this check (issue 41); the few that must stay are recorded
// exceptions, keyed by the argument's text. `checkBoundaries` is pure (files in, problems out), tested
// with a table of cases (test/integration/import-boundaries.test.ts); run as a script (part of
// `npm run lint`) it reads the git-tracked sources and prints `file:line: problem` for each,
// exiting 1 if there is any.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/**
 * @typedef {{ readonly path: string; readonly content: string }} SourceFile
 * @typedef {{ readonly file: string; readonly line: number; readonly message: string }} BoundaryProblem
 * @typedef {{ readonly layer: string; readonly unit: string }} Place
 */

/** Where each layer's sources live (a path relative to the repository root). */
const LAYOUT = [
  { pattern: /^packages\/core\/src\//, layer: 'core', unit: () => 'core' },
  { pattern: /^packages\/testkit\/src\//, layer: 'testkit', unit: () => 'testkit' },
  { pattern: /^packages\/controller\/src\//, layer: 'controller', unit: () => 'controller' },
  { pattern: /^packages\/lab\/src\//, layer: 'lab', unit: () => 'lab' },
  { pattern: /^packages\/operator\/src\//, layer: 'operator', unit: () => 'operator' },
  { pattern: /^packages\/resident\/src\//, layer: 'resident', unit: () => 'resident' },
  { pattern: /^packages\/cli\/src\//, layer: 'cli', unit: () => 'cli' },
  { pattern: /^(plugins|examples)\/([^/]+)\/src\//, layer: 'plugin', unit: (m) => m[2] },
];

/** What each layer may import of fleet's own packages. */
export const ALLOWED = {
  core: [],
  testkit: ['core', 'controller'],
  controller: ['core'],
  plugin: ['core'],
  lab: ['core', 'controller'],
  operator: ['core', 'controller'],
  resident: ['core'],
  cli: ['core', 'controller', 'lab', 'operator', 'resident'],
};

/**
 * The recorded exceptions: `file → package` with the reason. Each is a known debt, named here so
 * the rule can be on for everything else; an exception that no longer matches is itself reported.
 */
export const EXCEPTIONS = [
  {
    file: 'packages/controller/src/serve/plugins.ts',
    target: 'pathToFileURL(join(plugin.root, target)).href',
    reason:
      'the `fleet:register` hook of each plugin the node found on disk (the plugin seam, contract §2): its path is known only at run time',
  },
];

/** A call `import(x)` whose argument is not a string literal, as the exceptions name it. */
const NON_LITERAL_TARGET = (text) => `import(${text})`;

/**
 * The entry points below a package name that each fleet package declares in its `exports`
 * (test/integration/import-boundaries.test.ts keeps this table equal to the package.json files),
 * besides `package.json` itself: anything else below a package name is a deep import. The
 * operator's are its verbs' services, one entry each (docs/architecture.md "Services").
 */
export const PUBLIC_ENTRIES = {
  '@fleet/core': ['/command', '/di', '/node', '/plugin', '/zod'],
  '@fleet/controller': ['/runtime-run', '/serve'],
  '@fleet/operator': [
    '/apply',
    '/audit',
    '/bootstrap',
    '/bootstrap-receive',
    '/config-adopt',
    '/config-install',
    '/config-plan',
    '/config-read',
    '/drift',
    '/host-add',
    '/host-remove',
    '/plugins-new',
    '/release',
    '/report-run',
    '/schedule',
    '/status',
    '/token',
    '/upgrade',
    '/validate',
  ],
};

/**
 * Packages whose every module is an entry point (`exports: { "./*.js": … }`): `@fleet/resident`'s,
 * so a call that finds no resident loads its `place.js` alone (docs/resident.md) — its `exports`
 * list each entry by name, keeping `call-scope.js`, the per-call isolation only its server uses,
 * private. `@fleet/operator` keeps `./*.js` in its `exports` for tests that drive its inner
 * modules (test/e2e/ssh-recovery.test.ts), but sources reach it only through its services' named
 * entries (PUBLIC_ENTRIES).
 */
const MODULE_PACKAGES = ['@fleet/resident'];

/**
 * Libraries that core bundles and hands out (docs/adr/0011-core-ships-a-bundle.md): outside core,
 * fleet's packages reach them through core's entry, so a process loads the one copy inside core's
 * bundle. `typeOnly` libraries may still be named by `import type` (erased at run time).
 */
const THROUGH_CORE = {
  zod: { entry: '@fleet/core/zod', typeOnly: false },
  '@oclif/core': { entry: '@fleet/core/command', typeOnly: true },
};

/** Whether the import statement that names the specifier at `position` is `import type`/`export type`. */
function typeOnlyAt(content, position) {
  const start = Math.max(
    content.lastIndexOf('import', position),
    content.lastIndexOf('export', position),
  );
  return start >= 0 && /^(import|export)\s+type\b/.test(content.slice(start, position));
}

/** The fleet package a bare specifier names, as a place; `null` for anything else. */
function packagePlace(specifier) {
  const match = /^(@fleet\/[^/]+|fleet-plugin-[^/]+)(\/.*)?$/.exec(specifier);
  if (match === null) return null;
  const [, name, subpath] = match;
  const unit = name.startsWith('@fleet/plugin-')
    ? name.slice('@fleet/plugin-'.length)
    : name.startsWith('fleet-plugin-')
      ? name
      : name.slice('@fleet/'.length);
  const layer =
    name.startsWith('@fleet/plugin-') || name.startsWith('fleet-plugin-')
      ? 'plugin'
      : name.slice('@fleet/'.length);
  return { layer, unit, name, subpath: subpath ?? '' };
}

/** The layer and unit (package) of a repository path; `null` outside the checked sources. */
export function placeOf(file) {
  for (const entry of LAYOUT) {
    const match = entry.pattern.exec(file);
    if (match !== null) return { layer: entry.layer, unit: entry.unit(match) };
  }
  return null;
}

/** The package directory a repository path sits in (`plugins/router`), or `null`. */
function packageDir(file) {
  const match = /^((?:packages|plugins|examples)\/[^/]+)\//.exec(file);
  return match === null ? null : match[1];
}

function describe(place) {
  return place.layer === 'plugin' ? `plugin ${place.unit}` : place.layer;
}

/**
 * The problems of one import of `from` (a checked source file at `file`): a relative import that
 * leaves its package, a deep import into a fleet package, or one the layers forbid.
 */
function importProblem(file, from, specifier, typeOnly = false) {
  const bundled = THROUGH_CORE[specifier];
  if (bundled !== undefined && from.layer !== 'core' && !(bundled.typeOnly && typeOnly)) {
    return `${specifier}: import it through ${bundled.entry}, the copy inside core's bundle${bundled.typeOnly ? ' (types may come from ' + specifier + ' with `import type`)' : ''}`;
  }
  if (specifier.startsWith('.')) {
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
    const own = packageDir(file);
    if (own !== null && !resolved.startsWith(`${own}/`)) {
      return `${specifier}: a relative import out of ${own}: import the package by its name`;
    }
    return null;
  }
  const target = packagePlace(specifier);
  if (target === null) return null;
  if (target.layer === from.layer && target.unit === from.unit) return null;
  const moduleSubpath =
    MODULE_PACKAGES.includes(target.name) &&
    /^(\/[a-z0-9-]+)+\.js$/.test(target.subpath) &&
    !/^\/(dist|src|node_modules)\//.test(target.subpath);
  const declared = PUBLIC_ENTRIES[target.name] ?? [];
  const entry = target.subpath === '/package.json' || declared.includes(target.subpath);
  if (target.subpath !== '' && !entry && !moduleSubpath) {
    return `${specifier}: a deep import into ${target.name}: use what its exports offer`;
  }
  if (from.layer === 'plugin' && target.layer === 'plugin') {
    return `${specifier}: plugin ${from.unit} imports plugin ${target.unit}: plugins reach each other only through the registry`;
  }
  const allowed = ALLOWED[from.layer] ?? [];
  if (!allowed.includes(target.layer)) {
    const why =
      target.layer === 'plugin'
        ? 'plugins are reached only through the registry'
        : `${from.layer} may import only ${allowed.length === 0 ? "nothing of fleet's own" : allowed.join(', ')}`;
    return `${specifier}: ${describe(from)} imports ${describe(target)}: ${why}`;
  }
  return null;
}

function lineOf(content, position) {
  let line = 1;
  for (let i = 0; i < position && i < content.length; i += 1) if (content[i] === '\n') line += 1;
  return line;
}

/**
 * The boundary problems of a set of files (pure). Files outside the checked sources are ignored;
 * {@link EXCEPTIONS} are honoured, and one that matched nothing is a problem of its own.
 *
 * @param {readonly SourceFile[]} files
 * @param {readonly { file: string; target: string; reason: string }[]} [exceptions]
 * @returns {BoundaryProblem[]}
 */
export function checkBoundaries(files, exceptions = EXCEPTIONS) {
  const problems = [];
  const used = new Set();
  for (const { path: file, content } of files) {
    if (!/\.(ts|mts|cts|tsx|js|mjs)$/.test(file) || file.endsWith('.d.ts')) continue;
    const from = placeOf(file);
    if (from === null) continue;
    for (const dynamic of nonLiteralImports(file, content)) {
      const exception = exceptions.findIndex(
        (entry) => entry.file === file && entry.target === dynamic.argument,
      );
      if (exception >= 0) {
        used.add(exception);
        continue;
      }
      problems.push({
        file,
        line: lineOf(content, dynamic.pos),
        message: `${NON_LITERAL_TARGET(dynamic.argument)}: an import() of anything but a string literal loads what neither tsc nor this check can see: name the module, or take the dependency as a parameter`,
      });
    }
    const { importedFiles } = ts.preProcessFile(content, true, true);
    for (const imported of importedFiles) {
      const message = importProblem(
        file,
        from,
        imported.fileName,
        typeOnlyAt(content, imported.pos),
      );
      if (message === null) continue;
      const exception = exceptions.findIndex(
        (entry) => entry.file === file && entry.target === imported.fileName,
      );
      if (exception >= 0) {
        used.add(exception);
        continue;
      }
      problems.push({ file, line: lineOf(content, imported.pos), message });
    }
  }
  exceptions.forEach((entry, index) => {
    if (!used.has(index) && files.some((f) => f.path === entry.file)) {
      problems.push({
        file: entry.file,
        line: 1,
        message: `recorded exception for ${entry.target} no longer needed: remove it from scripts/import-boundaries.mjs`,
      });
    }
  });
  return problems;
}

/**
 * The `import()` calls of a source whose argument is not a string literal (a template without
 * substitutions counts as one), each with the argument's text and position. Only a file whose text
 * has such a call outside a literal's quotes is parsed.
 */
function nonLiteralImports(file, content) {
  if (!/\bimport\s*\(\s*(?!['"])/.test(content)) return [];
  const source = ts.createSourceFile(file, content, ts.ScriptTarget.Latest, false);
  const found = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (
        argument !== undefined &&
        !ts.isStringLiteral(argument) &&
        !ts.isNoSubstitutionTemplateLiteral(argument)
      ) {
        found.push({ argument: argument.getText(source), pos: node.getStart(source) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `file:line: message`. */
export function formatProblem(problem) {
  return `${problem.file}:${problem.line}: ${problem.message}`;
}

// ---- the script ---------------------------------------------------------------------------------

/** The tracked sources of the checked layers at `root`, as they are in the working tree. */
export function readSources(root) {
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: root,
      maxBuffer: 64 << 20,
    },
  )
    .toString('utf8')
    .split('\0')
    .filter((file) => file !== '' && placeOf(file) !== null);
  const files = [];
  for (const file of listed) {
    try {
      files.push({ path: file, content: readFileSync(path.join(root, file), 'utf8') });
    } catch {
      // deleted in the working tree
    }
  }
  return files;
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const problems = checkBoundaries(readSources(root));
  for (const problem of problems) console.log(formatProblem(problem));
  if (problems.length > 0) {
    console.log(`import-boundaries: ${problems.length} import(s) across a boundary`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main();
}
