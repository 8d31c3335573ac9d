import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { UNSET_FLEET_REGISTRY } from '@fleet/core';
import { nextSteps, PluginScaffoldService, type WiredDomain } from '@fleet/operator/plugins-new';

export interface PluginsNewResult {
  readonly root: string;
  readonly name: string;
  readonly domain: string;
  readonly kind: 'whole' | 'block';
  readonly path: string;
  readonly registry: string;
  readonly files: readonly string[];
  readonly wired?: WiredDomain;
}

export default class PluginsNew extends FleetCommand {
  static override summary = 'Write a new domain plugin package that builds, tests and links.';
  static override description =
    "A plugin for one file on the nodes, managed whole (--kind whole) or as a fleet-managed block between marker lines (--kind block), written against @fleet/core's public helpers only: its own package.json and tsconfig, an installer and an adopter, and tests on @fleet/testkit fake hosts. Its .npmrc binds the @fleet scope to --registry (never the public registry). Then: npm install, npm test, fleet plugins link DIR (docs/plugin-authoring.md). DIR (default: the package name without its scope) must not exist or be empty.";
  static override examples = [
    "<%= config.bin %> plugins new fleet-plugin-npmrc --kind block --path '~/.npmrc'",
    "<%= config.bin %> plugins new fleet-plugin-starship --kind whole --path '~/.config/starship.toml' --dir ./starship",
    "<%= config.bin %> plugins new fleet-plugin-npmrc --kind block --path '~/.npmrc' --wire --repo ~/fleet --host node-01",
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    name: Args.string({
      required: true,
      description: 'the npm package name (fleet-plugin-NAME; the domain is NAME unless --domain)',
    }),
  };
  static override flags = {
    kind: Flags.string({
      required: true,
      options: ['whole', 'block'],
      description: 'whole: the file equals its source; block: only the lines between markers',
    }),
    domain: Flags.string({ description: 'the domain name (default: from the package name)' }),
    path: Flags.string({
      description: "the file's path on a node, quoted: '~/…' (default ~/.config/DOMAIN/config)",
    }),
    comment: Flags.string({
      description: "the comment prefix of the block's marker lines (default '#')",
    }),
    dir: Flags.directory({ description: 'where to write the package' }),
    registry: Flags.string({
      env: 'FLEET_NPM_REGISTRY',
      description:
        "the npm registry fleet's packages are published to, bound to the @fleet scope in the package's .npmrc (https://, or http:// on loopback)",
    }),
    wire: Flags.boolean({
      default: false,
      description:
        'also wire the domain into the fleet repository (--repo): declare it in fleet.yaml and list it on the hosts, write its example source and host variable, commit; prints the node-policy lines each node needs',
    }),
    host: Flags.string({
      multiple: true,
      dependsOn: ['wire'],
      description: 'with --wire: a host to list the domain on (repeatable; default: every host)',
    }),
  };

  async run(): Promise<PluginsNewResult> {
    const { args, flags } = await this.parse(PluginsNew);
    const kind = flags.kind === 'block' ? 'block' : 'whole';
    const dir = flags.dir ?? args.name.replace(/^@[^/]+\//, '');
    const wire = flags.wire
      ? {
          root: await this.findRepo(flags.repo),
          ...(flags.host === undefined ? {} : { hosts: flags.host }),
        }
      : undefined;
    const service = await this.service(PluginScaffoldService);
    const result = await service.run({
      dir,
      scaffold: {
        name: args.name,
        kind,
        ...(flags.domain === undefined ? {} : { domain: flags.domain }),
        ...(flags.path === undefined ? {} : { path: await this.nodePath(flags.path) }),
        ...(flags.comment === undefined ? {} : { comment: flags.comment }),
        ...(flags.registry === undefined ? {} : { registry: flags.registry }),
      },
      ...(wire === undefined ? {} : { wire }),
    });
    this.log(
      `Wrote ${result.name} in ${result.root}: domain ${result.domain}, ${result.kind} file ${result.path}.`,
    );
    if (result.wired !== undefined) {
      const { wired } = result;
      this.log(
        `Wired domain ${result.domain} into ${wired.repo} (commit ${wired.commit.slice(0, 12)}): ${wired.paths.join(', ')}; hosts ${wired.hosts.join(', ') || 'none'}.`,
      );
      this.log(
        `On each of those nodes, add to ~/.config/fleet/node-policy.yaml (docs/node-policy.md):\n${wired.nodePolicy.trimEnd()}`,
      );
    }
    for (const line of nextSteps(result.root, result.registry, UNSET_FLEET_REGISTRY))
      this.log(line);
    return {
      root: result.root,
      name: result.name,
      domain: result.domain,
      kind: result.kind,
      path: result.path,
      registry: result.registry,
      files: [...result.files.keys()],
      ...(result.wired === undefined ? {} : { wired: result.wired }),
    };
  }
}
