import type { Installer } from '@fleet/core';
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

export default class Validate extends FleetCommand {
  static override summary =
    'Check fleet.yaml, hosts/*.yaml and that every template renders for every host.';
  static override description =
    'Checks the working tree — uncommitted changes included: what you are about to commit — where drift, plan and install read the last commit (HEAD). Says which paths are not committed yet. Every problem is reported with its file, field path (or line) and what is wrong; the exit code is 2 when there is any.';
  static override examples = [
    '<%= config.bin %> validate',
    '<%= config.bin %> validate --repo ~/fleet --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };

  async run(): Promise<ValidateResult> {
    const { flags } = await this.parse(Validate);
    const root = await this.findRepo(flags.repo);
    const {
      DOMAINS_DIR,
      FleetError,
      HOSTS_DIR,
      MANIFEST_FILE,
      createGit,
      isFleetError,
      loadRepo,
      parsePorcelainPaths,
      readRepoFile,
      validateRepo,
    } = await import('@fleet/core');
    const repo = await loadRepo(root);
    const registry = await this.loadRegistry();
    const domains = new Map(
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
    const report = validateRepo({
      repo,
      domains,
      installers,
      readCanonical: (path) => readRepoFile(root, path),
    });
    if (report.problems.length > 0) {
      const count = report.problems.length;
      throw new FleetError('REPO_INVALID', `${count} problem${count === 1 ? '' : 's'} in ${root}`, {
        problems: report.problems,
      });
    }
    // What drift, plan and install would read instead: HEAD, and what is not committed yet.
    const git = createGit(root);
    const head = await git.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
      allowFailure: true,
    });
    const headCommit = head.exitCode === 0 ? head.stdout.trim() : null;
    const status = await git.run(
      [
        '-c',
        'core.quotePath=false',
        'status',
        '--porcelain=v1',
        '-z',
        '--untracked-files=all',
        '--',
        MANIFEST_FILE,
        HOSTS_DIR,
        DOMAINS_DIR,
      ],
      { allowFailure: true },
    );
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
}
