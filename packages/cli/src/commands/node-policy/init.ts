import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { nodeHome, policyHomeFlag } from '../../node-policy.js';
import { FleetError, defaultNodePolicy } from '@fleet/core';
import { writeNodePolicy } from '@fleet/controller';

export interface NodePolicyInitJson {
  readonly file: string;
  readonly serves: readonly string[];
  readonly tools: readonly string[];
}

export default class NodePolicyInit extends FleetCommand {
  static override summary = "Write this node's policy: the domains it serves, at their defaults.";
  static override description = `Run on the node itself (contract §5.1): no config verb, no wire route and no bootstrap bundle ever writes the policy. Writes <home>/.config/fleet/node-policy.yaml (mode 0600) serving every domain of the bundled plugins (or the --serve ones) at their declared paths, with no coupled actions, unattended installs denied, bootstrap denied, no trusted release key and no tool for \`fleet version\` (or the --tool ones). Edit the file for the rest (per-host paths, actions, symlinkInto, bootstrap, runtime.trustedKeys, supervisor): see docs/node-policy.md. A running controller reads the new file at its next request.

Refuses to replace an existing policy without --force.`;
  static override examples = [
    '<%= config.bin %> node-policy init',
    '<%= config.bin %> node-policy init --home /srv/node --serve router --serve harness-policy --tool node --tool git',
    '<%= config.bin %> node-policy init --home /srv/node --force --json',
  ];
  static override flags = {
    home: policyHomeFlag,
    serve: Flags.string({
      description: 'a domain this node serves (repeat for more; default: every bundled domain)',
      multiple: true,
    }),
    tool: Flags.string({
      description: 'a tool `fleet version` may run here with --version (repeat for more)',
      multiple: true,
    }),
    force: Flags.boolean({ description: 'replace an existing policy', default: false }),
  };

  async run(): Promise<NodePolicyInitJson> {
    const { flags } = await this.parse(NodePolicyInit);
    const home = await nodeHome(flags.home);
    const registry = await this.loadRegistry();
    const known = registry.domains().map((entry) => entry.descriptor.domain);
    const serves =
      flags.serve ??
      registry
        .domains()
        .filter((entry) => entry.plugin.type === 'core')
        .map((entry) => entry.descriptor.domain);
    const unknown = serves.filter((domain) => !known.includes(domain));
    if (unknown.length > 0) {
      throw new FleetError(
        'USAGE',
        `--serve ${unknown.join(', ')}: no loaded plugin provides ${unknown.length > 1 ? 'these domains' : 'this domain'} (known: ${known.join(', ')})`,
      );
    }
    const tools = flags.tool ?? [];
    const file = await writeNodePolicy(
      home,
      defaultNodePolicy([...new Set(serves)], { tools: [...new Set(tools)] }),
      { force: flags.force },
    );
    this.log(`${file}: serving ${[...new Set(serves)].sort().join(', ') || 'no domain'}.`);
    this.log('Edit it for per-host paths, actions and bootstrap (docs/node-policy.md).');
    return { file, serves: [...new Set(serves)].sort(), tools: [...new Set(tools)] };
  }
}
