import { Flags } from '@fleet/core/command';
import type {
  CodeBearingGrant,
  DomainDeclaration,
  FleetRepo,
  Installer,
  NodePolicy,
  Problem,
} from '@fleet/core';
import { FleetCommand } from '../base-command.js';

export interface ValidateResult {
  readonly valid: true;
  readonly repo: string;
  /** What was checked: the working tree, uncommitted changes included (what is about to be committed). */
  readonly checked: 'working-tree';
  /** The commit drift, plan and install read (`null`: no commit yet). */
  readonly headCommit: string | null;
  /** Paths under fleet.yaml, hosts/ and domains/ not committed: checked here, not used by those verbs yet. */
  readonly uncommitted: readonly string[];
  readonly hosts: number;
  readonly domains: number;
  readonly rendered: number;
}

export interface ValidateNodePolicyResult {
  readonly valid: true;
  readonly nodePolicy: string;
  readonly sha256: string;
  readonly policy: NodePolicy;
  /** Domains it serves that no plugin of this CLI provides: not checked here (warned). */
  readonly warnings?: readonly string[];
  /** Each allowed path whose install runs code as the node's user (docs/node-policy.md). */
  readonly codeBearing: CodeBearingGrant[];
}

export default class Validate extends FleetCommand {
  static override summary =
    'Check fleet.yaml, hosts/*.yaml and that every template renders for every host.';
  static override description = `Checks the working tree — uncommitted changes included: what you are about to commit — where drift, plan and install read the last commit (HEAD). Says which paths are not committed yet. Every problem is reported with its file, field path (or line) and what is wrong; the exit code is 2 when there is any. Each runtime artifact fleet.yaml lists is read and checked too: its sha256, its version, and the commit its build record names (package/fleet-build.json, written when it was packed), which must be fleet.yaml's commit for it.

With --node-policy FILE it checks a node policy file instead (docs/node-policy.md), as a controller reads it at start: mode 0600 and owner, YAML without duplicate keys, the strict schema, and the domains of this CLI's plugins (a domain none of them provides is warned about, not refused: the node's runtime may carry its plugin).`;
  static override examples = [
    '<%= config.bin %> validate',
    '<%= config.bin %> validate --repo ~/fleet --json',
    '<%= config.bin %> validate --node-policy ~/.config/fleet/node-policy.yaml',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'none' as const; // it reads no host; the working tree is named by its problems
  static override flags = {
    'node-policy': Flags.file({
      description: 'check this node policy file (not the repository)',
      exists: true,
    }),
  };

  async run(): Promise<ValidateResult | ValidateNodePolicyResult> {
    const { flags } = await this.parse(Validate);
    if (flags['node-policy'] !== undefined) return this.nodePolicy(flags['node-policy']);
    const root = await this.findRepo(flags.repo);
    const {
      FleetError,
      UNCOMMITTED_STATUS_ARGS,
      createGit,
      isFleetError,
      loadRepo,
      parsePorcelainPaths,
      readRepoFile,
      readWorkingSource,
      repoManifestPath,
      validateRepo,
      withRepoFiles,
    } = await import('@fleet/core');
    const repo = await loadRepo(root);
    const registry = await this.loadRegistry();
    const domains = new Map<string, DomainDeclaration>(
      registry.domains().map((entry) => [entry.descriptor.domain, entry.descriptor]),
    );
    const installers = new Map<string, Installer>();
    for (const name of domains.keys()) {
      try {
        installers.set(name, await registry.installer(name));
      } catch (error) {
        // A domain declared without behaviour is only rendered; any other failure is reported.
        if (!isFleetError(error) || error.code !== 'DOMAIN_BEHAVIOUR_ABSENT') throw error;
      }
    }
    // A domain whose files the repository declares (the files domain, contract §10.4): its
    // manifest is checked, and its entries rendered, like every other domain's files.
    const manifestProblems: Problem[] = [];
    for (const [name, declaration] of domains) {
      const manifestPath = repoManifestPath(declaration);
      if (manifestPath === null) continue;
      let text: string | null = null;
      try {
        text = readRepoFile(root, manifestPath);
      } catch (error) {
        if (!isFleetError(error) || error.code !== 'CANONICAL_MISSING') throw error;
      }
      try {
        domains.set(
          name,
          withRepoFiles(declaration, installers.get(name), text, [...domains.values()]),
        );
      } catch (error) {
        if (!isFleetError(error)) throw error;
        manifestProblems.push(
          ...(error.problems && error.problems.length > 0
            ? error.problems
            : [{ message: error.message }]),
        );
      }
    }
    // A source as a commit has it: a link followed within the repository; one that is not
    // UTF-8 text is its bytes, checked as drift checks them (a block entry's is refused).
    const sources = new Map<string, ReturnType<typeof readWorkingSource>>();
    const readSource = (path: string) => {
      let read = sources.get(path);
      if (read === undefined) sources.set(path, (read = readWorkingSource(root, path)));
      return read;
    };
    const report = validateRepo({
      repo,
      domains,
      installers,
      readCanonical: (path) => readSource(path).text,
      binaryReason: (path) => {
        const { source } = readSource(path);
        return 'binary' in source ? source.binary : undefined;
      },
    });
    const problems = [
      ...manifestProblems,
      ...report.problems,
      ...(await artifactProblems(root, repo)),
      ...(await pluginTarballProblems(root, repo)),
    ];
    if (problems.length > 0) {
      const count = problems.length;
      throw new FleetError('REPO_INVALID', `${count} problem${count === 1 ? '' : 's'} in ${root}`, {
        problems,
      });
    }
    // What drift, plan and install would read instead: HEAD, and what is not committed yet.
    const git = createGit(root);
    const head = await git.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
      allowFailure: true,
    });
    const headCommit = head.exitCode === 0 ? head.stdout.trim() : null;
    const status = await git.run([...UNCOMMITTED_STATUS_ARGS], { allowFailure: true });
    const uncommitted = status.exitCode === 0 ? parsePorcelainPaths(status.stdout) : [];
    this.log(
      `${root}: valid — ${report.hosts} host${report.hosts === 1 ? '' : 's'}, ${report.rendered} file${
        report.rendered === 1 ? '' : 's'
      } rendered across ${report.domains} domain${report.domains === 1 ? '' : 's'} (the working tree, uncommitted changes included).`,
    );
    if (headCommit === null) {
      this.log('Nothing is committed yet: drift, plan and install read the last commit.');
    } else if (uncommitted.length > 0) {
      this.log(
        `Not committed yet (drift, plan and install read commit ${headCommit.slice(0, 12)} until you commit): ${uncommitted.join(', ')}`,
      );
    }
    return {
      valid: true,
      repo: root,
      checked: 'working-tree',
      headCommit,
      uncommitted,
      hosts: report.hosts,
      domains: report.domains,
      rendered: report.rendered,
    };
  }

  private async nodePolicy(file: string): Promise<ValidateNodePolicyResult> {
    const path = await import('node:path');
    const { checkedPolicy, summarise, unknownDomainWarning } = await import('../node-policy.js');
    const absolute = path.resolve(file);
    const loaded = await checkedPolicy(absolute, path.dirname(absolute), await this.loadRegistry());
    const warnings = loaded.unknownDomains.map((domain) => unknownDomainWarning(absolute, domain));
    for (const warning of warnings) this.note(`warning: ${warning}`);
    this.log(`${absolute}: a valid node policy`);
    for (const line of summarise(loaded.policy)) this.log(`  ${line}`);
    const { codeBearing } = loaded;
    for (const line of codeBearing.lines) this.log(`  ${line}`);
    return {
      valid: true,
      nodePolicy: absolute,
      sha256: loaded.sha256,
      policy: loaded.policy,
      ...(warnings.length > 0 ? { warnings } : {}),
      codeBearing: codeBearing.grants,
    };
  }
}

/**
 * Every artifact fleet.yaml lists, checked as `bootstrap plan` and `upgrade` would check it
 * (contract §1.8): readable, its sha256 and version, and its own commit against fleet.yaml's; the
 * canonical one must carry every plugin fleet.yaml names, as pinned (contract §10.5).
 */
async function artifactProblems(root: string, repo: FleetRepo): Promise<Problem[]> {
  const { isFleetError } = await import('@fleet/core');
  const { loadArtifact } = await import('@fleet/operator/runtime/artifact.js');
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
  const { createHash } = await import('node:crypto');
  const { readFile } = await import('node:fs/promises');
  const path = await import('node:path');
  const { pinnedTarballPath } = await import('@fleet/core');
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
