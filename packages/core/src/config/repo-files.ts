/**
 * Files a domain declares in the repository (contract §10.4: the files domain's
 * `domains/files/files.yaml`), operator side and pure: the domain's installer parses its manifest
 * (`Installer.repoFiles`), this checks what it returned as the plugin boundary checks any
 * declaration, refuses a path another domain owns (`FILES_PATH_OWNED`), and gives the declaration
 * those files — so drift, plan, install, adopt and validate treat them as every domain's files.
 */
import { FleetError, type Problem } from '../errors.js';
import type { DomainDeclaration, ManagedFile } from '../interfaces/domain.js';
import type { Installer } from '../interfaces/installer.js';
import { repoManagedFileSchema } from '../registry/schema.js';
import { DOMAINS_DIR } from '../repo/load.js';
import { fieldPath } from '../zod-problems.js';
import { homePathOverlap } from '../paths.js';

/** The repo path of a domain's manifest (`domains/files/files.yaml`), or `null` without one. */
export function repoManifestPath(declaration: DomainDeclaration): string | null {
  return declaration.repoManifest === undefined
    ? null
    : `${DOMAINS_DIR}/${declaration.domain}/${declaration.repoManifest}`;
}

/**
 * `declaration` with the files its repository manifest declares. `manifest` is the manifest's text
 * at the commit being read, `null` when the repository has none (the domain then manages nothing).
 * `others` are the other registered domains: a declared path of theirs is refused, naming the
 * owner. Throws `FILES_MANIFEST_INVALID` or `FILES_PATH_OWNED` with every problem at once.
 */
export function withRepoFiles(
  declaration: DomainDeclaration,
  installer: Pick<Installer, 'repoFiles'> | undefined,
  manifest: string | null,
  others: readonly DomainDeclaration[],
): DomainDeclaration {
  const source = repoManifestPath(declaration);
  if (source === null || manifest === null) return declaration;
  if (installer?.repoFiles === undefined) {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `domain ${declaration.domain} declares its files in ${source} but its plugin provides no installer to read it`,
    );
  }
  const { files, hostVariables } = installer.repoFiles(manifest, source);
  refuseInvalid(files, source);
  refuseOwnedPaths(declaration, files, others, source);
  const ids = new Set(declaration.files.map((file) => file.id));
  const added: ManagedFile[] = [];
  for (const file of files) {
    if (ids.has(file.id)) {
      throw new FleetError('FILES_MANIFEST_INVALID', `${source}: ${file.path} is listed twice`, {
        problems: [{ file: source, message: `${file.path} is listed twice` }],
      });
    }
    ids.add(file.id);
    added.push(file);
  }
  return {
    ...declaration,
    files: [...declaration.files, ...added],
    hostVariables: [...new Set([...declaration.hostVariables, ...hostVariables])],
  };
}

/** `FILES_MANIFEST_INVALID` with every problem, unless each file passes the plugin boundary's schema. */
function refuseInvalid(files: readonly ManagedFile[], source: string): void {
  const invalid: Problem[] = [];
  files.forEach((file, index) => {
    const parsed = repoManagedFileSchema.safeParse(file);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
      invalid.push({
        file: source,
        path: fieldPath([index, ...issue.path]),
        message: issue.message,
      });
    }
  });
  if (invalid.length > 0) {
    throw new FleetError('FILES_MANIFEST_INVALID', `${source}: ${invalid.length} problem(s)`, {
      problems: invalid,
    });
  }
}

/** `FILES_PATH_OWNED` with every problem, when a file of the domain overlaps one of `others`. */
function refuseOwnedPaths(
  declaration: DomainDeclaration,
  files: readonly ManagedFile[],
  others: readonly DomainDeclaration[],
  source: string,
): void {
  const owners: { path: string; domain: string }[] = [];
  for (const other of others) {
    if (other.domain === declaration.domain) continue;
    for (const owned of [...other.files, ...(other.derivedPaths ?? [])]) {
      owners.push({ path: owned.path, domain: other.domain });
    }
  }
  const owned: Problem[] = [];
  for (const file of [...declaration.files, ...files]) {
    // The same file (case and Unicode normalisation aside), or a directory above or below one of
    // another domain's files: either would write inside what that domain owns.
    for (const owner of owners) {
      const overlap = homePathOverlap(file.path, owner.path);
      if (overlap === null) continue;
      const where =
        overlap === 'same'
          ? `is a path of domain ${owner.domain}`
          : overlap === 'parent'
            ? `is a directory above ${owner.path}, a path of domain ${owner.domain}`
            : `is inside ${owner.path}, a path of domain ${owner.domain}`;
      owned.push({
        file: source,
        message: `${file.path} ${where}: manage it through that domain, not the files domain`,
      });
      break;
    }
  }
  if (owned.length > 0) {
    throw new FleetError(
      'FILES_PATH_OWNED',
      `${source}: ${owned.map((p) => p.message).join('; ')}`,
      { problems: owned },
    );
  }
}
