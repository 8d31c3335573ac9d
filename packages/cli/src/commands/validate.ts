import { Flags } from '@fleet/core/command';
import type { CodeBearingGrant, NodePolicy } from '@fleet/core';
import { FleetCommand } from '../base-command.js';
import { ValidateService, type ValidateResult } from '@fleet/operator/validate';
import * as path from 'node:path';
import { checkedPolicy, summarise, unknownDomainWarning } from '../node-policy.js';

export type { ValidateResult } from '@fleet/operator/validate';

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
    const service = await this.service(ValidateService);
    const result = await service.run({ root });
    const { hosts, domains, rendered, headCommit, uncommitted } = result;
    this.log(
      `${root}: valid — ${hosts} host${hosts === 1 ? '' : 's'}, ${rendered} file${
        rendered === 1 ? '' : 's'
      } rendered across ${domains} domain${domains === 1 ? '' : 's'} (the working tree, uncommitted changes included).`,
    );
    if (headCommit === null) {
      this.log('Nothing is committed yet: drift, plan and install read the last commit.');
    } else if (uncommitted.length > 0) {
      this.log(
        `Not committed yet (drift, plan and install read commit ${headCommit.slice(0, 12)} until you commit): ${uncommitted.join(', ')}`,
      );
    }
    return result;
  }

  private async nodePolicy(file: string): Promise<ValidateNodePolicyResult> {
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
