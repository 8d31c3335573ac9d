/**
 * `fleet validate`'s service: the working tree — uncommitted changes included, what the operator
 * is about to commit — checked as a whole: fleet.yaml and hosts/, every domain's repository
 * manifest, every template rendered for every host, each artifact and plugin tarball fleet.yaml
 * pins (config/validate.ts; contract §1.8, §7). Every problem is one `REPO_INVALID` (exit 2); a
 * valid tree answers what drift, plan and install read instead. The registry comes from the
 * container the CLI builds (docs/architecture.md "Services"), asked for only once fleet.yaml and
 * hosts/ parse.
 */
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { validateWorkingTree } from '../config/validate.js';

export interface ValidateOptions {
  readonly root: string;
}

/** `fleet validate`'s answer for a valid working tree (its `--json`). */
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

@injectable()
export class ValidateService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  /** Checks the working tree at `root`; throws REPO_INVALID with every problem found. */
  async run(options: ValidateOptions): Promise<ValidateResult> {
    const { hosts, domains, rendered, headCommit, uncommitted } = await validateWorkingTree({
      root: options.root,
      loadRegistry: () => this.plugins.registry(),
    });
    return {
      valid: true,
      repo: options.root,
      checked: 'working-tree',
      headCommit,
      uncommitted,
      hosts,
      domains,
      rendered,
    };
  }
}
