/**
 * What every config verb needs, gathered once: the repository (found and validated) as committed
 * at HEAD — fleet.yaml, hosts/ and domains/ all from that one commit, with the paths left
 * uncommitted (docs/classification.md: one source of truth) —, the registry, each domain's
 * runtime (its installer when the plugin has one), the operator's credentials and a client per
 * host. Loaded lazily by the commands, never at CLI start.
 */
import type {
  CheckAnswers,
  ControllerClient,
  Credentials,
  DomainRuntime,
  FleetRepo,
  Git,
  Registry,
  RepoSource,
} from '@fleet/core';
import * as core from '@fleet/core';

export interface FleetContext {
  /** fleet.yaml and hosts/ as committed at `source.commit`. */
  readonly repo: FleetRepo;
  /** The commit everything is read at, and what the working tree has not committed. */
  readonly source: RepoSource;
  readonly git: Git;
  readonly registry: Registry;
  /** Runtimes of the domains the selected hosts run, by name. */
  readonly domains: ReadonlyMap<string, DomainRuntime>;
  client(host: string): ControllerClient;
  readonly credentialsPath: string;
  /**
   * Closes every host's keep-alive connection (contract §14) and keeps the installers' check
   * answers for the next call (`.git/fleet-cache`): at the end of the verb.
   */
  close(): void;
}

export interface ContextOptions {
  readonly root: string;
  readonly registry: Registry;
  /** Domain names to load (default: every domain any host runs). */
  readonly domains?: readonly string[];
  readonly timeoutMs?: number;
  /** False for verbs that never talk to a host. */
  readonly needsCredentials?: boolean;
}

export async function loadFleetContext(options: ContextOptions): Promise<FleetContext> {
  const git = core.createGit(options.root);
  // The domains' repository manifests (the files domain's files.yaml) are read in the same git
  // process as fleet.yaml and hosts/, at the same commit.
  const manifestPaths = options.registry
    .domains()
    .map((entry) => core.repoManifestPath(entry.descriptor))
    .filter((path): path is string => path !== null);
  const { repo, source, files } = await core.loadRepoAtHead(options.root, git, {
    alsoRead: manifestPaths,
  });
  const wanted =
    options.domains ??
    [...new Set(Object.values(repo.manifest.hosts).flatMap((host) => host.domains))].sort();
  const cacheDir = core.cacheDirOf(options.root);
  const checkAnswers = core.checkAnswerCache(cacheDir);
  const loading: DomainLoading = {
    registry: options.registry,
    git,
    commit: source.commit,
    files,
    cacheDir,
    checkAnswers,
  };
  const domains = new Map<string, DomainRuntime>();
  for (const name of wanted) domains.set(name, await loadDomainRuntime(loading, name));
  const credentialsPath = core.defaultCredentialsPath(process.env);
  let credentials: Credentials | undefined;
  const clients = new Map<string, ControllerClient>();
  if (options.needsCredentials !== false) credentials = await core.loadCredentials(credentialsPath);
  return {
    repo,
    source,
    git,
    registry: options.registry,
    domains,
    credentialsPath,
    close() {
      checkAnswers.save();
      for (const client of clients.values()) client.close();
      clients.clear();
    },
    client(host) {
      let client = clients.get(host);
      if (!client) {
        if (!credentials) throw new Error('this verb was loaded without credentials');
        client = core.clientForHost({
          repo,
          host,
          credentials,
          credentialsPath,
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        });
        clients.set(host, client);
      }
      return client;
    },
  };
}

/** What loading each domain's runtime shares: the commit read, and the operator's caches. */
interface DomainLoading {
  readonly registry: Registry;
  readonly git: Git;
  readonly commit: string;
  /** The files read with fleet.yaml at `commit` (the domains' repository manifests). */
  readonly files: ReadonlyMap<string, string | null>;
  /** `.git/fleet-cache`, or `null` when the repository has no git directory of its own. */
  readonly cacheDir: string | null;
  readonly checkAnswers: CheckAnswers;
}

/** One domain's runtime: its declaration with the repository's files, its cached installer. */
async function loadDomainRuntime(loading: DomainLoading, name: string): Promise<DomainRuntime> {
  const { registry, cacheDir } = loading;
  const entry = registry.domain(name);
  let installer;
  try {
    installer = await registry.installer(name);
  } catch (error) {
    if (!core.isFleetError(error) || error.code !== 'DOMAIN_BEHAVIOUR_ABSENT') throw error;
  }
  // A domain whose files are declared in the repository gets them at the commit read here.
  const manifestPath = core.repoManifestPath(entry.descriptor);
  const declaration =
    manifestPath === null
      ? entry.descriptor
      : core.withRepoFiles(
          entry.descriptor,
          // The manifest as this plugin parsed it before, by blob id (.git/fleet-cache).
          installer?.repoFiles === undefined
            ? installer
            : {
                repoFiles: core.cachedRepoFiles(
                  cacheDir,
                  entry.plugin,
                  name,
                  installer.repoFiles.bind(installer),
                ),
              },
          loading.files.has(manifestPath)
            ? (loading.files.get(manifestPath) ?? null)
            : await readAtCommit(loading.git, loading.commit, manifestPath),
          registry.domains().map((d) => d.descriptor),
        );
  const runtime = core.domainRuntime(declaration, installer);
  if (installer?.check === undefined) return runtime;
  return {
    ...runtime,
    // The check's answers remembered across runs (.git/fleet-cache): every host's view
    // differs, so a fleet's checks would otherwise all run again on every call.
    operator: {
      view: installer.view.bind(installer),
      managed: installer.managed.bind(installer),
      check: loading.checkAnswers.wrap(entry.plugin, name, installer.check.bind(installer)),
    },
  };
}

/** A file's text at `commit`, or `null` when the commit does not have it. */
async function readAtCommit(git: Git, commit: string, path: string): Promise<string | null> {
  const shown = await git.run(['show', `${commit}:${path}`], { allowFailure: true });
  return shown.exitCode === 0 ? shown.stdout : null;
}
