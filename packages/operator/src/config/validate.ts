/**
 * `fleet validate` (contract §1.8), the service: the working tree — uncommitted changes included,
 * what the operator is about to commit — checked as a whole: fleet.yaml and hosts/, every domain's
 * repository manifest (the files domain's files.yaml, contract §10.4), every template rendered for
 * every host, each artifact fleet.yaml lists and each plugin tarball it pins. Every problem is
 * collected into one `REPO_INVALID`; a valid tree answers what drift, plan and install would read
 * instead (HEAD, and the paths not committed yet).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type {
  DomainDeclaration,
  FleetRepo,
  Installer,
  Problem,
  Registry,
  ValidationReport,
} from '@fleet/core';
import { isFleetError, pinnedTarballPath } from '@fleet/core';
import * as core from '@fleet/core';
import { loadArtifact } from '../runtime/artifact.js';

export interface ValidateInput {
  readonly root: string;
  /** Loaded once fleet.yaml and hosts/ parse: a repository that does not loads no plugin. */
  readonly loadRegistry: () => Promise<Registry>;
}

export interface ValidatedTree {
  readonly hosts: number;
  readonly domains: number;
  readonly rendered: number;
  /** The commit drift, plan and install read (`null`: no commit yet). */
  readonly headCommit: string | null;
  /** Paths under fleet.yaml, hosts/ and domains/ not committed. */
  readonly uncommitted: readonly string[];
}

/** Checks the working tree; throws REPO_INVALID with every problem found. */
export async function validateWorkingTree(input: ValidateInput): Promise<ValidatedTree> {
  const { root } = input;
  const repo = await core.loadRepo(root);
  const registry = await input.loadRegistry();
  const { domains, installers, manifestProblems } = await declaredDomains(root, registry);
  const report = validateRendered(root, repo, domains, installers);
  const problems = [
    ...manifestProblems,
    ...report.problems,
    ...(await artifactProblems(root, repo)),
    ...(await pluginTarballProblems(root, repo)),
  ];
  if (problems.length > 0) {
    const count = problems.length;
    throw new core.FleetError(
      'REPO_INVALID',
      `${count} problem${count === 1 ? '' : 's'} in ${root}`,
      { problems },
    );
  }
  return {
    hosts: report.hosts,
    domains: report.domains,
    rendered: report.rendered,
    ...(await committedState(root)),
  };
}

/**
 * Every domain the plugins declare, with its installer when it has one; a domain whose files the
 * repository declares (the files domain, contract §10.4) has its manifest checked, and its
 * entries rendered, like every other domain's files.
 */
async function declaredDomains(
  root: string,
  registry: Registry,
): Promise<{
  domains: Map<string, DomainDeclaration>;
  installers: Map<string, Installer>;
  manifestProblems: Problem[];
}> {
  const domains = new Map<string, DomainDeclaration>(
    registry.domains().map((entry) => [entry.descriptor.domain, entry.descriptor]),
  );
  const installers = new Map<string, Installer>();
  for (const name of domains.keys()) {
    try {
      installers.set(name, await registry.installer(name));
    } catch (error) {
      // A domain declared without behaviour is only rendered; any other failure is reported.
      if (!core.isFleetError(error) || error.code !== 'DOMAIN_BEHAVIOUR_ABSENT') throw error;
    }
  }
  const manifestProblems: Problem[] = [];
  for (const [name, declaration] of domains) {
    const manifestPath = core.repoManifestPath(declaration);
    if (manifestPath === null) continue;
    let text: string | null = null;
    try {
      text = core.readRepoFile(root, manifestPath);
    } catch (error) {
      if (!core.isFleetError(error) || error.code !== 'CANONICAL_MISSING') throw error;
    }
    try {
      domains.set(
        name,
        core.withRepoFiles(declaration, installers.get(name), text, [...domains.values()]),
      );
    } catch (error) {
      if (!core.isFleetError(error)) throw error;
      manifestProblems.push(
        ...(error.problems && error.problems.length > 0
          ? error.problems
          : [{ message: error.message }]),
      );
    }
  }
  return { domains, installers, manifestProblems };
}

/** Every template rendered for every host, from the sources as the working tree holds them. */
function validateRendered(
  root: string,
  repo: FleetRepo,
  domains: ReadonlyMap<string, DomainDeclaration>,
  installers: ReadonlyMap<string, Installer>,
): ValidationReport {
  // A source as a commit has it: a link followed within the repository; one that is not
  // UTF-8 text is its bytes, checked as drift checks them (a block entry's is refused).
  const sources = new Map<string, ReturnType<typeof core.readWorkingSource>>();
  const readSource = (path: string) => {
    let read = sources.get(path);
    if (read === undefined) sources.set(path, (read = core.readWorkingSource(root, path)));
    return read;
  };
  return core.validateRepo({
    repo,
    domains,
    installers,
    readCanonical: (path) => readSource(path).text,
    binaryReason: (path) => {
      const { source } = readSource(path);
      return 'binary' in source ? source.binary : undefined;
    },
  });
}

/** What drift, plan and install would read instead: HEAD, and what is not committed yet. */
async function committedState(
  root: string,
): Promise<{ headCommit: string | null; uncommitted: readonly string[] }> {
  const git = core.createGit(root);
  const head = await git.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
    allowFailure: true,
  });
  const headCommit = head.exitCode === 0 ? head.stdout.trim() : null;
  const status = await git.run([...core.UNCOMMITTED_STATUS_ARGS], { allowFailure: true });
  const uncommitted = status.exitCode === 0 ? core.parsePorcelainPaths(status.stdout) : [];
  return { headCommit, uncommitted };
}

/**
 * Every artifact fleet.yaml lists, checked as `bootstrap plan` and `upgrade` would check it
 * (contract §1.8): readable, its sha256 and version, and its own commit against fleet.yaml's; the
 * canonical one must carry every plugin fleet.yaml names, as pinned (contract §10.5).
 */
async function artifactProblems(root: string, repo: FleetRepo): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const [index, entry] of repo.manifest.artifacts.entries()) {
    try {
      const canonical = entry.version === repo.manifest.canonicalVersion;
      await loadArtifact(root, entry.file, entry, canonical ? repo.manifest.plugins : undefined);
    } catch (error) {
      if (!isFleetError(error)) throw error;
      const field =
        error.code === 'ARTIFACT_PROVENANCE' ? 'commit' : error.code === 'USAGE' ? 'file' : null;
      const path = field === null ? ['artifacts', index] : ['artifacts', index, field];
      const line = repo.manifestLine(path);
      problems.push({
        file: 'fleet.yaml',
        ...(line === undefined ? {} : { line }),
        path: path.join('.'),
        message: error.message,
      });
    }
  }
  return problems;
}

/**
 * Each plugin fleet.yaml pins (contract §10.5) has its tarball in the repository at
 * `artifacts/plugins/<npm pack file name>`, with the pinned sha256: what the runtime is packed with.
 */
async function pluginTarballProblems(root: string, repo: FleetRepo): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const [index, pin] of repo.manifest.plugins.entries()) {
    const file = pinnedTarballPath(pin);
    let message: string | null = null;
    try {
      const sha256 = createHash('sha256')
        .update(await readFile(path.join(root, ...file.split('/'))))
        .digest('hex');
      if (sha256 !== pin.sha256) {
        message = `${file} has sha256 ${sha256}, but fleet.yaml pins plugin ${pin.name} ${pin.version} to ${pin.sha256}`;
      }
    } catch (error) {
      message = `plugin ${pin.name} ${pin.version}: its tarball ${file} cannot be read (${String((error as NodeJS.ErrnoException).code ?? error)}): keep the npm pack of the plugin there`;
    }
    if (message === null) continue;
    const line = repo.manifestLine(['plugins', index]);
    problems.push({
      file: 'fleet.yaml',
      ...(line === undefined ? {} : { line }),
      path: `plugins.${index}`,
      message,
    });
  }
  return problems;
}
