#!/usr/bin/env node
// The reference check: every reference in the repository resolves inside the repository.
//
//   contract §N[.M]   a section of docs/contract.md (lists `§6, §8.4`, ranges `§12–§13`, and a
//                     reference broken over comment lines `contract\n * §10.2` included)
//   catalogue N       a case of docs/reliability.md (`catalogue 22`, `catalogue C21–C23`,
//                     `catalogue B`, `catalogue §2` for a section of it)
//   [text](path#a)    a relative Markdown link: a tracked file, and the anchor one of its headings
//   docs/x.md, README.md  a mention of a repository document: a tracked file
//   `packages/x/src/y.ts`  in a Markdown document, a file or folder of the repository named as
//                     inline code: a tracked file or folder (scripts/doc-code-paths.mjs)
//   and no mention at all of a document outside the repository (the product brief it was derived
//   from, or the folder it sits in).
//
// `checkReferences` is pure (tracked files and their contents in, problems out) so it is tested
// with a table of cases (test/integration/doc-references.test.ts); run as a script
// (`node scripts/doc-references.mjs`, part of `npm run lint`) it reads the git-tracked files and
// prints `file:line: problem` for each, exiting 1 if there is any.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import GithubSlugger from 'github-slugger';
import { missingCodePaths } from './doc-code-paths.mjs';

export const CONTRACT_DOC = 'docs/contract.md';
export const RELIABILITY_DOC = 'docs/reliability.md';

/**
 * The checker's own sources: they spell out the forbidden and the broken forms on purpose (the
 * patterns, the table of cases), so they are not checked.
 */
export const SELF_FILES = [
  'scripts/doc-references.mjs',
  'scripts/doc-code-paths.mjs',
  'scripts/doc-references.d.mts',
  'test/integration/doc-references.test.ts',
];

// Between two words of a reference: blanks, or a line break followed by the next line's comment
// leader (` * `, `// `, `# `, `> `).
const GAP = String.raw`(?:[ \t]|\r?\n[ \t]*(?:\*|//+|#+|>)?)+`;
const OPTIONAL_GAP = `(?:${GAP})?`;
const NUMBER = String.raw`\d+(?:\.\d+)*`;
const DASH = '[–-]';

/** Names of documents outside the repository: never mentioned inside it. */
const OUTSIDE = [
  { pattern: /\bSPEC\b/g, what: 'SPEC (the product brief, outside the repository)' },
  {
    pattern: /(?<![\w-])(?:\.\.\/)?shared\//g,
    what: 'a path into shared/ (outside the repository)',
  },
  {
    pattern: /reliability-catalogue\.md/g,
    what: 'reliability-catalogue.md (outside the repository)',
  },
];

/**
 * @typedef {{ readonly path: string; readonly content: string }} TrackedFile
 * @typedef {{ readonly file: string; readonly line: number; readonly message: string }} ReferenceProblem
 */

/**
 * Every broken reference in `files` (the repository's tracked files with their contents), in file
 * and line order.
 *
 * @param {readonly TrackedFile[]} files
 * @returns {ReferenceProblem[]}
 */
export function checkReferences(files) {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const contract = byPath.get(CONTRACT_DOC);
  const reliability = byPath.get(RELIABILITY_DOC);
  const context = {
    byPath,
    directories: directoriesOf(files.map((file) => file.path)),
    sections: contract ? contractSections(contract.content) : null,
    catalogue: reliability ? catalogueIndex(reliability.content) : null,
    anchors: new Map(),
  };
  /** @type {ReferenceProblem[]} */
  const problems = [];
  for (const file of files) {
    if (SELF_FILES.includes(file.path)) continue;
    const lines = lineStarts(file.content);
    const report = (offset, message) =>
      problems.push({ file: file.path, line: lineOf(lines, offset), message });
    checkOutsideMentions(file, report);
    checkContractReferences(file, context, report);
    checkCatalogueReferences(file, context, report);
    checkDocumentMentions(file, context, report);
    if (file.path.endsWith('.md')) {
      checkMarkdownLinks(file, context, report);
      for (const problem of missingCodePaths(file, context, join, ['.', ...ancestors(file.path)])) {
        report(problem.offset, problem.message);
      }
    }
  }
  return problems.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
}

/** `file:line: message`, the form the script prints. */
export function formatProblem(problem) {
  return `${problem.file}:${problem.line}: ${problem.message}`;
}

// ---- the documents referred to ------------------------------------------------------------------

/** Section numbers of the contract: headings that start with one (`## 8. …`, `### 8.2 …`). */
export function contractSections(markdown) {
  const sections = new Set();
  for (const heading of headings(markdown)) {
    const match = /^(\d+(?:\.\d+)*)\.?\s/.exec(heading.text);
    if (match) sections.add(match[1]);
  }
  return sections;
}

/**
 * The catalogue's numbering: sections (`## 2. …`), groups of cases (`### B. …`) and cases
 * (`#### 22. …`), each case in the group it sits under.
 */
export function catalogueIndex(markdown) {
  const sections = new Set();
  const groups = new Map();
  const cases = new Map();
  let group = null;
  for (const heading of headings(markdown)) {
    if (heading.level === 2) {
      const match = /^(\d+)\.\s/.exec(heading.text);
      if (match) sections.add(match[1]);
      group = null;
    } else if (heading.level === 3) {
      const match = /^([A-Z])\.\s+(.*)$/.exec(heading.text);
      group = match ? match[1] : null;
      if (match) groups.set(match[1], match[2]);
    } else if (heading.level === 4) {
      const match = /^(\d+)\.\s/.exec(heading.text);
      if (match) cases.set(Number(match[1]), group);
    }
  }
  return { sections, groups, cases };
}

/** ATX headings outside fenced code, with their level and text. */
function headings(markdown) {
  const found = [];
  let fence = null;
  for (const line of markdown.split(/\r?\n/)) {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      if (fence === null) fence = fenceMatch[1][0];
      else if (fenceMatch[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const match = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (match) found.push({ level: match[1].length, text: match[2] });
  }
  return found;
}

/** The anchors GitHub gives a document: one per heading (slugged, duplicates numbered), plus `<a id>`. */
export function anchorsOf(markdown) {
  const slugger = new GithubSlugger();
  const anchors = new Set();
  for (const heading of headings(markdown)) {
    const text = heading.text
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
      .replace(/<[^>]+>/g, '') // inline HTML
      .replace(/[*`]/g, ''); // emphasis and code marks
    anchors.add(slugger.slug(text));
  }
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

// ---- the checks ---------------------------------------------------------------------------------

function checkOutsideMentions(file, report) {
  for (const { pattern, what } of OUTSIDE) {
    for (const match of file.content.matchAll(pattern)) {
      report(
        match.index,
        `mentions ${what}: cite the repository's own documents (contract §N in docs/contract.md, catalogue N in docs/reliability.md)`,
      );
    }
  }
}

const CONTRACT_REFERENCE = new RegExp(String.raw`\bcontract${GAP}§`, 'g');

function checkContractReferences(file, context, report) {
  const references = [];
  for (const match of file.content.matchAll(CONTRACT_REFERENCE)) {
    const start = match.index + match[0].length - 1; // at the §
    references.push(...sectionList(file.content, start));
  }
  // Inside the contract a bare § is one of its own sections.
  if (file.path === CONTRACT_DOC) {
    for (const match of file.content.matchAll(new RegExp(`§(${NUMBER})`, 'g'))) {
      references.push({ offset: match.index, section: match[1] });
    }
  }
  const seen = new Set();
  for (const reference of references) {
    const key = `${reference.offset}:${reference.section}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (context.sections === null) {
      report(reference.offset, `contract §${reference.section}: ${CONTRACT_DOC} is not tracked`);
    } else if (!context.sections.has(reference.section)) {
      report(
        reference.offset,
        `contract §${reference.section}: ${CONTRACT_DOC} has no section ${reference.section}`,
      );
    }
  }
}

/**
 * The sections of `§6, §8.4 and §10.1`, `§12–§13` or `§8.1–8.3`, starting at the first `§`; each
 * with the offset of its number.
 */
function sectionList(text, start) {
  const item = new RegExp(
    `§(${NUMBER})(?:${OPTIONAL_GAP}${DASH}${OPTIONAL_GAP}§?(${NUMBER}))?`,
    'y',
  );
  const separator = new RegExp(
    `(?:${OPTIONAL_GAP},${OPTIONAL_GAP}|${GAP}(?:and|or)${GAP})(?=§)`,
    'y',
  );
  const found = [];
  let at = start;
  for (;;) {
    item.lastIndex = at;
    const match = item.exec(text);
    if (!match) break;
    found.push({ offset: match.index, section: match[1] });
    if (match[2] !== undefined) {
      found.push({ offset: match.index + match[0].lastIndexOf(match[2]), section: match[2] });
    }
    separator.lastIndex = item.lastIndex;
    const next = separator.exec(text);
    if (!next) break;
    at = separator.lastIndex;
  }
  return found;
}

const CATALOGUE_REFERENCE = new RegExp(
  String.raw`\bcatalogue(?:-|${GAP})(?:cases?${GAP})?(?=§\d|[A-Z]\b|[A-Z]\d|\d)`,
  'g',
);

function checkCatalogueReferences(file, context, report) {
  for (const match of file.content.matchAll(CATALOGUE_REFERENCE)) {
    for (const reference of catalogueList(file.content, match.index + match[0].length)) {
      const problem = catalogueProblem(reference, context.catalogue);
      if (problem) report(reference.offset, `catalogue ${reference.text}: ${problem}`);
    }
  }
}

/** The items of `A1, C27, E38`, `21–23`, `C21–C23`, `B`, `H 55` or `§2`, from `start`. */
function catalogueList(text, start) {
  const single = String.raw`(?:§\d+|[A-Z]?\d+|[A-Z] \d+|[A-Z])(?![\w.])`;
  const item = new RegExp(`(${single})(?:${DASH}(${single}))?`, 'y');
  const separator = new RegExp(
    `(?:${OPTIONAL_GAP},${OPTIONAL_GAP}|${GAP}and${GAP})(?=§\\d|[A-Z]\\d|\\d)`,
    'y',
  );
  const found = [];
  let at = start;
  for (;;) {
    item.lastIndex = at;
    const match = item.exec(text);
    if (!match) break;
    found.push({ offset: match.index, text: match[1] });
    if (match[2] !== undefined) {
      found.push({ offset: match.index + match[0].lastIndexOf(match[2]), text: match[2] });
    }
    separator.lastIndex = item.lastIndex;
    if (!separator.exec(text)) break;
    at = separator.lastIndex;
  }
  return found;
}

function catalogueProblem(reference, catalogue) {
  // `catalogue N` is how the documents name the form itself, as they write `contract §N.M`.
  if (reference.text === 'N') return null;
  if (catalogue === null) return `${RELIABILITY_DOC} is not tracked`;
  const section = /^§(\d+)$/.exec(reference.text);
  if (section) {
    return catalogue.sections.has(section[1])
      ? null
      : `${RELIABILITY_DOC} has no section ${section[1]}`;
  }
  const match = /^([A-Z])?\s?(\d+)?$/.exec(reference.text);
  if (!match) return `not a catalogue reference`;
  const [, group, number] = match;
  if (group !== undefined && !catalogue.groups.has(group)) {
    return `${RELIABILITY_DOC} has no group ${group}`;
  }
  if (number === undefined) return null;
  const caseNumber = Number(number);
  if (!catalogue.cases.has(caseNumber)) return `${RELIABILITY_DOC} has no case ${caseNumber}`;
  const actual = catalogue.cases.get(caseNumber);
  if (group !== undefined && actual !== group) {
    return `case ${caseNumber} is in group ${actual} (${catalogue.groups.get(actual)}), not ${group}`;
  }
  return null;
}

// A repository document named in prose or code: `docs/x.md`, `plugins/router/README.md`.
const DOCUMENT_MENTION =
  /(?<![\w./@-])((?:[\w.@-]+\/)*?(?:docs\/(?:[\w.-]+\/)*[\w-]+\.md|README\.md))(#[\w-]+)?/g;

function checkDocumentMentions(file, context, report) {
  for (const match of file.content.matchAll(DOCUMENT_MENTION)) {
    const [, mentioned, anchor] = match;
    const bases = ['.', ...ancestors(file.path)];
    // `package/README.md` inside a tarball is no repository path: only a mention that starts in
    // a directory of the repository is one.
    const first = mentioned.includes('/') ? mentioned.slice(0, mentioned.indexOf('/')) : null;
    if (first !== null && !bases.some((dir) => context.directories.has(join(dir, first)))) continue;
    const candidates = bases.map((dir) => join(dir, mentioned));
    const target = candidates.find((candidate) => context.byPath.has(candidate));
    if (target === undefined) {
      report(match.index, `${mentioned}: no such tracked file`);
    } else if (anchor !== undefined) {
      const problem = anchorProblem(target, anchor.slice(1), context);
      if (problem) report(match.index, `${mentioned}${anchor}: ${problem}`);
    }
  }
}

function checkMarkdownLinks(file, context, report) {
  const text = blankCode(file.content);
  const links = [
    ...text.matchAll(/\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g),
    ...text.matchAll(/^\s{0,3}\[[^\]\n]+\]:\s*<?([^\s>]+)>?/gm),
  ];
  for (const match of links) {
    const link = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) continue;
    const hash = link.indexOf('#');
    const target = decodeURI(hash === -1 ? link : link.slice(0, hash));
    const anchor = hash === -1 ? undefined : link.slice(hash + 1);
    const resolved = target === '' ? file.path : join(path.posix.dirname(file.path), target);
    if (resolved === null || resolved.startsWith('..')) {
      report(match.index, `link ${link}: points outside the repository`);
      continue;
    }
    const isFile = context.byPath.has(resolved);
    const isDirectory = context.directories.has(resolved.replace(/\/$/, ''));
    if (!isFile && !isDirectory) {
      report(match.index, `link ${link}: ${resolved} is not a tracked file`);
    } else if (anchor !== undefined && anchor !== '' && isFile) {
      const problem = anchorProblem(resolved, anchor, context);
      if (problem) report(match.index, `link ${link}: ${problem}`);
    }
  }
}

function anchorProblem(target, anchor, context) {
  if (!target.endsWith('.md')) return null;
  let anchors = context.anchors.get(target);
  if (anchors === undefined) {
    anchors = anchorsOf(context.byPath.get(target).content);
    context.anchors.set(target, anchors);
  }
  return anchors.has(anchor) ? null : `${target} has no heading #${anchor}`;
}

// ---- text helpers -------------------------------------------------------------------------------

/** The content with fenced code blocks and inline code spans blanked (same length, same lines). */
function blankCode(markdown) {
  let fence = null;
  const lines = markdown.split('\n').map((line) => {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      if (fence === null) fence = fenceMatch[1][0];
      else if (fenceMatch[1][0] === fence) fence = null;
      return ' '.repeat(line.length);
    }
    if (fence !== null) return ' '.repeat(line.length);
    return line.replace(/(`+)[^`]*?\1/g, (code) => ' '.repeat(code.length));
  });
  return lines.join('\n');
}

function lineStarts(text) {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts, offset) {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid] <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** `a/b` joined with `../c` → `a/c`; `null` when it climbs out of the repository. */
function join(dir, relative) {
  const joined = path.posix.normalize(path.posix.join(dir, relative));
  return joined.startsWith('../') || joined === '..' ? null : joined.replace(/^\.\//, '');
}

/** A file's directory and each directory above it, the repository root last (`.`). */
function ancestors(file) {
  const dirs = [];
  for (let dir = path.posix.dirname(file); dir !== '.'; dir = path.posix.dirname(dir)) {
    dirs.push(dir);
  }
  dirs.push('.');
  return dirs;
}

function directoriesOf(paths) {
  const dirs = new Set();
  for (const file of paths) {
    for (let dir = path.posix.dirname(file); dir !== '.'; dir = path.posix.dirname(dir)) {
      dirs.add(dir);
    }
  }
  return dirs;
}

// ---- the script ---------------------------------------------------------------------------------

/** The tracked text files of the repository at `root`, as they are in the working tree. */
export function readTrackedFiles(root) {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: root, maxBuffer: 64 << 20 })
    .toString('utf8')
    .split('\0')
    .filter((file) => file !== '');
  const files = [];
  for (const file of listed) {
    let bytes;
    try {
      bytes = readFileSync(path.join(root, file));
    } catch {
      continue; // deleted in the working tree: not there to refer to
    }
    if (bytes.includes(0)) continue; // binary
    files.push({ path: file, content: bytes.toString('utf8') });
  }
  return files;
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const problems = checkReferences(readTrackedFiles(root));
  for (const problem of problems) console.log(formatProblem(problem));
  if (problems.length > 0) {
    console.log(`doc-references: ${problems.length} broken reference(s)`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main();
}
