/**
 * What a host should hold, operator side and pure: for each file of each domain the host runs, its
 * node path and its desired managed view (template space: host variables rendered, secrets still
 * names), from the canonical files at one commit. And, once per canonical file for the whole
 * fleet, the index of its published versions (viewed through the domain's installer). What a
 * domain and a target are — the shapes every config verb passes around — are domain-runtime.ts
 * and file-target.ts; this module computes them.
 */
import { FleetError, type Problem } from '../errors.js';
import type { DomainDeclaration, ManagedFile } from '../interfaces/domain.js';
import { HistoryIndex } from '../classify/history-index.js';
import type { CanonicalSnapshot } from '../classify/history.js';
import { canonicalPath, nodePathFor } from '../render/views.js';
import { renderTemplate, scanPlaceholders, secretNames } from '../render/template.js';
import { SOURCE_BYTES, sourceRefused } from '../repo/sources.js';
import { defaultFileMode } from '../classify/attributes.js';
import type { DomainRuntime, OperatorHalf } from './domain-runtime.js';
import { targetKey, type FileTarget } from './file-target.js';

function problemOf(error: unknown, file: string): Problem {
  if (error instanceof FleetError) return error.problems[0] ?? { file, message: error.message };
  return { file, message: error instanceof Error ? error.message : String(error) };
}

/**
 * Every file target of a host, in domain then declaration order. Each desired view also passes the
 * installer's fail-closed `check`, in every verb (contract §8.2: a canonical the installer would
 * refuse is an `error` in drift as in install, never `stale` in one and refused in the other). A
 * check's answer is kept per distinct view, so hosts that render alike cost one check.
 */
export function targetsForHost(
  host: string,
  variables: Readonly<Record<string, string>>,
  domains: readonly DomainRuntime[],
  snapshot: Pick<CanonicalSnapshot, 'atRef' | 'sources'>,
): FileTarget[] {
  const hostFile = `hosts/${host}.yaml`;
  const targets: FileTarget[] = [];
  for (const { declaration, operator } of domains) {
    for (const declared of declaration.files) {
      const canonical = canonicalPath(declaration, declared);
      const file = withSourceMode(declaration, declared, snapshot, canonical);
      let path = file.path;
      let desired: FileTarget['desired'];
      try {
        path = nodePathFor(file, variables, hostFile);
        const refused = snapshot.sources?.get(canonical);
        if (refused !== undefined && 'problem' in refused) {
          throw sourceRefused(canonical, refused.problem);
        }
        const source = snapshot.atRef.get(canonical);
        if (source === undefined || source === null) {
          throw new FleetError('CANONICAL_MISSING', `${canonical} is missing at the repo commit`, {
            problems: [
              { file: canonical, message: 'canonical file is missing at the repo commit' },
            ],
          });
        }
        const binary = refused === undefined ? undefined : refused.binary;
        desired =
          binary === undefined
            ? desiredView(operator, declaration, file, source, variables, () => {
                // A files entry with `template: false` is copied as it is, braces and all (§10.4).
                const rendered =
                  file.template === false
                    ? source
                    : renderTemplate(source, {
                        file: canonical,
                        variables,
                        allowed: declaration.hostVariables,
                        hostFile,
                      });
                const content = operator.view(file, rendered, declaration);
                const [refused] = checked(operator, file, content);
                return refused
                  ? { ok: false, problem: { ...refused, file: refused.file ?? canonical } }
                  : { ok: true, content };
              })
            : bytesView(declaration, file, canonical, source, binary);
      } catch (error) {
        desired = { ok: false, problem: problemOf(error, canonical) };
      }
      targets.push({
        domain: declaration.domain,
        file: withDefaultMode(declaration, file, desired),
        path,
        canonical,
        desired,
      });
    }
  }
  return targets;
}

/**
 * The desired view of a source that is not UTF-8 text (`binary` says why): its bytes, in base64,
 * for a repository-declared whole file — never rendered, as Ansible's `copy` and chezmoi copy a
 * file. A block's body and a domain's own files are text: such a source is refused for them,
 * with the offset of its first byte that is not UTF-8 (contract §10.4).
 */
function bytesView(
  declaration: DomainDeclaration,
  file: ManagedFile,
  canonical: string,
  base64: string,
  binary: string,
): FileTarget['desired'] {
  const refusal = bytesSourceRefusal(declaration, file, binary);
  if (refusal === null) return { ok: true, content: base64, encoding: SOURCE_BYTES };
  throw sourceRefused(canonical, refusal);
}

/**
 * Why a source that is not UTF-8 text (`binary` says why) cannot be `file`'s, or `null` when it
 * can: only a repository-declared whole file copies bytes. One message for drift, plan and install
 * (`targetsForHost`) and for `fleet validate` (`validate.ts`), so each says the same (§10.4).
 */
export function bytesSourceRefusal(
  declaration: Pick<DomainDeclaration, 'domain' | 'repoManifest'>,
  file: Pick<ManagedFile, 'kind'>,
  binary: string,
): string | null {
  if (declaration.repoManifest !== undefined && file.kind === 'whole') return null;
  const what =
    file.kind === 'block'
      ? "a block entry's source is its text body"
      : `${declaration.domain} files are text`;
  return `${binary}: ${what}, so it must be UTF-8 (only a whole files entry copies a source byte for byte)`;
}

/** The mode of an executable source's file when its entry names none (contract §10.4). */
export const EXECUTABLE_MODE = '0755';
/** ... and when its source names a secret: the file stays its owner's alone. */
export const EXECUTABLE_SECRET_MODE = '0700';

/**
 * A repository-declared whole file as its source's git mode makes it (contract §10.4): an
 * executable source (100755) whose entry names no `mode` is installed executable — 0755 as git
 * checks it out and chezmoi's `executable_` writes it, or 0700 when its source names a secret, so a
 * file holding one is never readable by others. A declared `mode` always wins; a block entry's
 * file is the host user's, and a domain's own declared files keep their declaration (the node
 * refuses a mode for those: their modes are the domain's).
 */
function withSourceMode(
  declaration: DomainDeclaration,
  file: ManagedFile,
  snapshot: Pick<CanonicalSnapshot, 'atRef' | 'sources'>,
  canonical: string,
): ManagedFile {
  if (declaration.repoManifest === undefined || file.kind !== 'whole' || file.mode !== undefined) {
    return file;
  }
  const source = snapshot.sources?.get(canonical);
  if (source === undefined || 'problem' in source || !source.executable) return file;
  const text = snapshot.atRef.get(canonical) ?? '';
  const secret = scanPlaceholders(text).placeholders.some((ph) => ph.namespace === 'secret');
  const mode = secret ? EXECUTABLE_SECRET_MODE : EXECUTABLE_MODE;
  // One object per (declared file, mode): the view memos below are keyed by the file object.
  let byMode = executableFiles.get(file);
  if (byMode === undefined) executableFiles.set(file, (byMode = new Map<string, ManagedFile>()));
  let executable = byMode.get(mode);
  if (executable === undefined) byMode.set(mode, (executable = { ...file, mode }));
  return executable;
}
const executableFiles = new WeakMap<ManagedFile, Map<string, ManagedFile>>();

/**
 * A repository-declared whole file without `mode` that renders a secret has mode 0600 (contract
 * §10.4, `defaultFileMode`): compared and set like a declared mode, so a file holding a secret is
 * never left readable by others. Other files without a mode keep the host's (a new one is 0644:
 * the node's default, `file-installer.ts`). A plugin's own files never carry a mode.
 */
function withDefaultMode(
  declaration: DomainDeclaration,
  file: ManagedFile,
  desired: FileTarget['desired'],
): ManagedFile {
  if (declaration.repoManifest === undefined || file.kind !== 'whole' || file.mode !== undefined) {
    return file;
  }
  if (!desired.ok || secretNames(desired.content).length === 0) return file;
  const mode = defaultFileMode(true, true);
  return mode === null ? file : { ...file, mode };
}

/**
 * The desired views computed, per (operator, declaration, declared file) and canonical source, by
 * the values of the host variables the source names (contract §14: a fleet of 1,000 hosts renders
 * each canonical 1,000 times, and most — a policy file without placeholders — render alike). Safe:
 * rendering is a pure function of the source and those values (`{{ host.NAME }}` is the only
 * variable part, contract §4), and the view and check are the installer's pure functions of what
 * rendering gave (the check memo below assumes the same); the key holds every value the render
 * reads. Only a view that rendered, viewed and passed its check is kept — a failure names the
 * host's file, so it is computed for each host — and only while the memo is small (a source
 * naming `node_id` renders differently for every host: those are computed each time).
 */
interface SourceViews {
  /** The host variables the source's placeholders name, in order (with repeats). */
  readonly names: readonly string[];
  readonly views: Map<string, FileTarget['desired']>;
}
const views = new WeakMap<
  OperatorHalf,
  WeakMap<DomainDeclaration, WeakMap<ManagedFile, Map<string, SourceViews>>>
>();
/** Distinct views remembered per canonical source at most, and the largest one remembered. */
const VIEW_MEMO_ENTRIES = 64;
const VIEW_MEMO_BYTES = 64 * 1024;

function memoOf<K extends object, V>(map: WeakMap<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

/** `compute()`'s desired view, or the one remembered for a host whose values render alike. */
function desiredView(
  operator: OperatorHalf,
  declaration: DomainDeclaration,
  file: ManagedFile,
  source: string,
  variables: Readonly<Record<string, string>>,
  compute: () => FileTarget['desired'],
): FileTarget['desired'] {
  if (source.length > VIEW_MEMO_BYTES) return compute();
  const byFile = memoOf(
    memoOf(views, operator, () => new WeakMap()),
    declaration,
    () => new WeakMap(),
  );
  const bySource = memoOf(byFile, file, () => new Map<string, SourceViews>());
  let memo = bySource.get(source);
  if (memo === undefined) {
    const names = scanPlaceholders(source)
      .placeholders.filter((ph) => ph.namespace === 'host')
      .map((ph) => ph.name);
    bySource.set(source, (memo = { names, views: new Map() }));
  }
  // A variable the host does not set is a render error, never remembered: computed each time.
  if (!memo.names.every((name) => Object.hasOwn(variables, name))) return compute();
  const key = JSON.stringify(memo.names.map((name) => variables[name]));
  const known = memo.views.get(key);
  if (known !== undefined) return known;
  const desired = compute();
  if (
    desired.ok &&
    desired.content.length <= VIEW_MEMO_BYTES &&
    memo.views.size < VIEW_MEMO_ENTRIES
  ) {
    memo.views.set(key, desired);
  }
  return desired;
}

const checks = new WeakMap<OperatorHalf, WeakMap<ManagedFile, Map<string, readonly Problem[]>>>();
/** Views remembered per file at most, and the largest one remembered (the rest are checked again). */
const CHECK_MEMO_ENTRIES = 64;
const CHECK_MEMO_BYTES = 64 * 1024;

/** The installer's `check` of one view, remembered per (installer, declared file, content). */
function checked(operator: OperatorHalf, file: ManagedFile, content: string): readonly Problem[] {
  if (operator.check === undefined) return [];
  let byFile = checks.get(operator);
  if (byFile === undefined)
    checks.set(operator, (byFile = new WeakMap<ManagedFile, Map<string, readonly Problem[]>>()));
  let byContent = byFile.get(file);
  if (byContent === undefined)
    byFile.set(file, (byContent = new Map<string, readonly Problem[]>()));
  let problems = byContent.get(content);
  if (problems === undefined) {
    problems = operator.check(file, content);
    if (byContent.size < CHECK_MEMO_ENTRIES && content.length <= CHECK_MEMO_BYTES) {
      byContent.set(content, problems);
    }
  }
  return problems;
}

/** Repo paths of every canonical file the given domains read. */
export function canonicalPaths(domains: readonly DomainRuntime[]): string[] {
  const paths = new Set<string>();
  for (const { declaration } of domains) {
    for (const file of declaration.files) paths.add(canonicalPath(declaration, file));
  }
  return [...paths].sort();
}

/**
 * One history index per (domain, file), built once for the whole fleet: each published version
 * of the canonical source passed through the installer's `view` (a block file's history is the
 * history of its section). A version the view refuses (damaged markers, long since fixed) is left
 * out: it cannot have been installed. Each is viewed and indexed when first asked, not here.
 */
export function buildHistoryIndexes(
  domains: readonly DomainRuntime[],
  snapshot: Pick<CanonicalSnapshot, 'history'>,
): Map<string, HistoryIndex> {
  const indexes = new Map<string, HistoryIndex>();
  for (const { declaration, operator } of domains) {
    for (const file of declaration.files) {
      const versions = snapshot.history.get(canonicalPath(declaration, file)) ?? [];
      // Viewed and indexed on first use (`HistoryIndex`): a current file never asks. A version
      // that is not text (bytes, base64) has no lines: only a file compared by bytes knows it.
      const viewed = () =>
        versions.flatMap((version) => {
          if (version.encoding !== undefined) return [];
          try {
            return [{ ...version, content: operator.view(file, version.content, declaration) }];
          } catch {
            return [];
          }
        });
      indexes.set(targetKey(declaration.domain, file.id), new HistoryIndex(viewed, () => versions));
    }
  }
  return indexes;
}
