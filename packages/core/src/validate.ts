/**
 * `fleet validate`'s checks beyond the schemas: every domain named in fleet.yaml is registered, and
 * every canonical file of every host's domains renders for that host. Problems are collected, not
 * thrown one at a time, so the operator sees them all at once.
 */
import { FleetError, formatProblem, type Problem } from './errors.js';
import type { DomainDeclaration, ManagedFile } from './interfaces/domain.js';
import { sourceRefused } from './repo/sources.js';
import type { Installer } from './interfaces/installer.js';
import { canonicalPath, nodePathFor, renderFileForHost } from './render/views.js';
import { bytesSourceRefusal } from './config/targets.js';
import type { FleetRepo } from './repo/load.js';
import { fieldPath } from './zod-problems.js';
import { compareCodeUnits } from './compare.js';

export interface ValidationReport {
  readonly hosts: number;
  readonly domains: number;
  /** Host × file renderings that succeeded. */
  readonly rendered: number;
  readonly problems: readonly Problem[];
}

export interface ValidateInput {
  readonly repo: FleetRepo;
  /** Registered domain declarations, by name. */
  readonly domains: ReadonlyMap<string, DomainDeclaration>;
  /** Reads a repo file's text; throws `CANONICAL_MISSING` when absent. */
  readonly readCanonical: (repoPath: string) => string;
  /**
   * Why a source is not UTF-8 text (`readWorkingSource`'s `source.binary`), `undefined` when it
   * is text. Such a source is checked as drift would check it (`bytesSourceRefusal`): a whole
   * files entry copies its bytes (never rendered), any other entry is refused with the same
   * message drift shows (contract §10.4). Absent: every source is read as text.
   */
  readonly binaryReason?: (repoPath: string) => string | undefined;
  /**
   * The installers of domains that have one: each rendered file then also goes through the
   * installer's `view` and fail-closed `check` (YAML that does not parse, a damaged marker), so a
   * canonical file no install would accept is caught here, before anyone plans an install.
   */
  readonly installers?: ReadonlyMap<string, Pick<Installer, 'view' | 'check'>>;
}

function problemsOf(error: unknown): Problem[] {
  if (error instanceof FleetError) {
    return error.problems.length > 0 ? [...error.problems] : [{ message: error.message }];
  }
  throw error;
}

/**
 * For a source that is not UTF-8 text: `true` when its entry copies its bytes (nothing to render),
 * or the refusal drift would show, thrown as `RENDER_FAILED` naming the source. `false`: a text
 * source, rendered as usual.
 */
function bytesChecked(
  declaration: DomainDeclaration,
  file: ManagedFile,
  host: string,
  repo: FleetRepo,
  input: ValidateInput,
): boolean {
  const canonical = canonicalPath(declaration, file);
  const binary = input.binaryReason?.(canonical);
  if (binary === undefined) return false;
  const refusal = bytesSourceRefusal(declaration, file, binary);
  if (refusal !== null) throw sourceRefused(canonical, refusal);
  // Its node path is still this host's to resolve (a missing variable is a problem here too).
  nodePathFor(file, repo.variables.get(host) ?? {}, `hosts/${host}.yaml`);
  return true;
}

export function validateRepo(input: ValidateInput): ValidationReport {
  const { repo, domains } = input;
  const problems: Problem[] = [];
  const known = [...domains.keys()].sort().join(', ') || 'none';
  const unknownDomain = (name: string, path: readonly PropertyKey[]): Problem => {
    const line = repo.manifestLine(path);
    return {
      file: 'fleet.yaml',
      ...(line === undefined ? {} : { line }),
      path: fieldPath(path),
      message: `unknown domain ${JSON.stringify(name)} (registered: ${known})`,
    };
  };

  for (const name of Object.keys(repo.manifest.domains)) {
    if (!domains.has(name)) problems.push(unknownDomain(name, ['domains', name]));
  }
  let rendered = 0;
  const used = new Set<string>();
  for (const [host, entry] of Object.entries(repo.manifest.hosts).sort(([a], [b]) =>
    compareCodeUnits(a, b),
  )) {
    entry.domains.forEach((name, index) => {
      const declaration = domains.get(name);
      if (!declaration) {
        problems.push(unknownDomain(name, ['hosts', host, 'domains', index]));
        return;
      }
      used.add(name);
      for (const file of declaration.files) {
        try {
          if (bytesChecked(declaration, file, host, repo, input)) {
            rendered += 1;
            continue;
          }
          const { content, canonical } = renderFileForHost(
            declaration,
            file,
            host,
            repo.variables.get(host) ?? {},
            input.readCanonical,
          );
          const installer = input.installers?.get(name);
          if (installer) {
            const view = installer.view(file, content, declaration);
            for (const problem of installer.check?.(file, view) ?? []) {
              // Said once per canonical file, like render problems (the same for every host).
              problems.push({ ...problem, file: problem.file ?? canonical });
            }
          }
          rendered += 1;
        } catch (error) {
          problems.push(...problemsOf(error));
        }
      }
    });
  }
  // A broken canonical file fails for every host the same way: say it once.
  const unique = new Map(problems.map((problem) => [formatProblem(problem), problem]));
  return {
    hosts: Object.keys(repo.manifest.hosts).length,
    domains: used.size,
    rendered,
    problems: [...unique.values()],
  };
}
