import { FleetCommand } from '../../base-command.js';
import {
  checkedPolicy,
  nodeHome,
  policyHomeFlag,
  summarise,
  unknownDomainWarning,
} from '../../node-policy.js';
import { nodePolicyFile, parseSshEd25519PublicKey } from '@fleet/core';
import type { CodeBearingGrant, NodePolicy } from '@fleet/core';
import { access } from 'node:fs/promises';
import * as controller from '@fleet/controller';
import { oldBootstrapPolicyPath } from '@fleet/controller';
import type { LearnedLoginPath } from '@fleet/controller';

export interface NodePolicyShowJson {
  readonly file: string;
  readonly sha256: string;
  readonly policy: NodePolicy;
  /** Each allowed path whose install runs code as the node's user (docs/node-policy.md). */
  readonly codeBearing: CodeBearingGrant[];
  /**
   * Without `versions.path`: the login PATH the controller learns for `fleet version`, learned
   * here the same way (docs/version.md); absent when the policy names a PATH.
   */
  readonly loginPath?: LearnedLoginPath;
}

export default class NodePolicyShow extends FleetCommand {
  static override summary = "Show this node's policy: what it serves, runs and writes.";
  static override description = `Reads <home>/.config/fleet/node-policy.yaml exactly as the controller does at start (mode 0600 and owner, YAML, the strict schema, the domains of the loaded plugins) and prints what it allows; a problem is reported with its file, line and field (exit 2). Without versions.path, it also shows the login PATH fleet version probes tools on, learned as the controller learns it: from the user's login shell (its passwd entry's, run with -l, bounded). Writes nothing.`;
  static override examples = [
    '<%= config.bin %> node-policy show',
    '<%= config.bin %> node-policy show --home /srv/node --json',
  ];
  static override flags = { home: policyHomeFlag };

  async run(): Promise<NodePolicyShowJson> {
    const { flags } = await this.parse(NodePolicyShow);
    const home = await nodeHome(flags.home);
    const loaded = await checkedPolicy(nodePolicyFile(home), home, await this.loadRegistry());
    for (const domain of loaded.unknownDomains)
      this.note(`warning: ${unknownDomainWarning(loaded.file, domain)}`);
    this.log(`${loaded.file} (sha256 ${loaded.sha256.slice(0, 12)})`);
    const fingerprintOf = (key: string) => parseSshEd25519PublicKey(key).fingerprint;
    for (const line of summarise(loaded.policy, fingerprintOf)) this.log(line);
    const { codeBearing } = loaded;
    for (const line of codeBearing.lines) this.log(line);
    // What `fleet version` probes tools on when the policy names no PATH: learned exactly as the
    // controller learns it (its user's login shell, bounded, minimal environment).
    let loginPath: LearnedLoginPath | undefined;
    if (loaded.policy.versions.path === undefined) {
      const platform =
        process.platform === 'win32' ? 'win32' : process.platform === 'darwin' ? 'darwin' : 'linux';
      loginPath = await controller.learnLoginPath({
        platform,
        home,
        account: controller.currentAccount(platform),
        processes: new controller.ExecaProcessRunner(home),
        timeoutMs: controller.LOGIN_PATH_TIMEOUT_MS,
        now: () => new Date(),
      });
      this.log(
        loginPath.source === 'login-shell'
          ? `versions probe tools on the login PATH ${loginPath.path} (${loginPath.detail})`
          : `versions probe tools on the controller's PATH: ${loginPath.detail}`,
      );
    }
    if (
      await access(oldBootstrapPolicyPath(home)).then(
        () => true,
        () => false,
      )
    ) {
      this.note(
        `note: ${oldBootstrapPolicyPath(home)} is ignored (this policy governs); remove it`,
      );
    }
    return {
      file: loaded.file,
      sha256: loaded.sha256,
      policy: loaded.policy,
      codeBearing: codeBearing.grants,
      ...(loginPath === undefined ? {} : { loginPath }),
    };
  }
}
