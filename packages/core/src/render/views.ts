/**
 * Operator-side per-host views: which node path each of a domain's files lands on for a host,
 * and its canonical source rendered for that host (host variables only; secrets stay names).
 */
import { FleetError } from '../errors.js';
import type { DerivedPath, DomainDeclaration, ManagedFile } from '../interfaces/domain.js';
import { parseHomePath } from '../paths.js';
import { renderTemplate } from './template.js';

/**
 * The node path of a managed file or derived path for a host: the host's `pathVariable` value
 * when set (and itself a valid `~/` path), else the declared default.
 */
export function nodePathFor(
  file: ManagedFile | DerivedPath,
  variables: Readonly<Record<string, string>>,
  hostFile: string,
): string {
  if (file.pathVariable === undefined || !Object.hasOwn(variables, file.pathVariable)) {
    return file.path;
  }
  const path = variables[file.pathVariable] as string;
  try {
    parseHomePath(path);
  } catch (error) {
    throw new FleetError(
      'HOST_FILE_INVALID',
      `${hostFile}: ${file.pathVariable}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return path;
}

/** Repo path of a managed file's canonical source. */
export function canonicalPath(declaration: DomainDeclaration, file: ManagedFile): string {
  return `domains/${declaration.domain}/${file.canonical}`;
}

export interface RenderedFile {
  readonly domain: string;
  readonly file: ManagedFile;
  /** Repo path of the canonical source. */
  readonly canonical: string;
  /** Node path for this host. */
  readonly path: string;
  /** Canonical source rendered for the host (template space: secrets still placeholders). */
  readonly content: string;
}

/** Renders one managed file of a domain for one host. Throws `RENDER_FAILED`. */
export function renderFileForHost(
  declaration: DomainDeclaration,
  file: ManagedFile,
  host: string,
  variables: Readonly<Record<string, string>>,
  readCanonical: (repoPath: string) => string,
): RenderedFile {
  const hostFile = `hosts/${host}.yaml`;
  const canonical = canonicalPath(declaration, file);
  const source = readCanonical(canonical);
  // A files entry with `template: false` is copied as it is (contract §10.4).
  const content =
    file.template === false
      ? source
      : renderTemplate(source, {
          file: canonical,
          variables,
          allowed: declaration.hostVariables,
          hostFile,
        });
  return {
    domain: declaration.domain,
    file,
    canonical,
    path: nodePathFor(file, variables, hostFile),
    content,
  };
}

/** Renders every managed file of a domain for one host. Throws on the first that fails. */
export function renderDomainForHost(
  declaration: DomainDeclaration,
  host: string,
  variables: Readonly<Record<string, string>>,
  readCanonical: (repoPath: string) => string,
): RenderedFile[] {
  return declaration.files.map((file) =>
    renderFileForHost(declaration, file, host, variables, readCanonical),
  );
}
