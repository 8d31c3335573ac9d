import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';

export interface PluginsNewResult {
  readonly root: string;
  readonly name: string;
  readonly domain: string;
  readonly kind: 'whole' | 'block';
  readonly path: string;
  readonly files: readonly string[];
}

export default class PluginsNew extends FleetCommand {
  static override summary = 'Write a new domain plugin package that builds, tests and links.';
  static override description =
    "A plugin for one file on the nodes, managed whole (--kind whole) or as a fleet-managed block between marker lines (--kind block), written against @fleet/core's public helpers only: its own package.json and tsconfig, an installer and an adopter, and tests on @fleet/testkit fake hosts. Then: npm install, npm run build, npm test, fleet plugins link DIR (docs/plugin-authoring.md). DIR (default: the package name without its scope) must not exist or be empty.";
  static override examples = [
    "<%= config.bin %> plugins new fleet-plugin-npmrc --kind block --path '~/.npmrc'",
    "<%= config.bin %> plugins new fleet-plugin-starship --kind whole --path '~/.config/starship.toml' --dir ./starship",
  ];
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
  };

  async run(): Promise<PluginsNewResult> {
    const { args, flags } = await this.parse(PluginsNew);
    const { writePluginScaffold } = await import('@fleet/core');
    const kind = flags.kind === 'block' ? 'block' : 'whole';
    const dir = flags.dir ?? args.name.replace(/^@[^/]+\//, '');
    const result = await writePluginScaffold(dir, {
      name: args.name,
      kind,
      ...(flags.domain === undefined ? {} : { domain: flags.domain }),
      ...(flags.path === undefined ? {} : { path: await this.nodePath(flags.path) }),
      ...(flags.comment === undefined ? {} : { comment: flags.comment }),
    });
    this.log(
      `Wrote ${result.name} in ${result.root}: domain ${result.domain}, ${result.kind} file ${result.path}.`,
    );
    this.log(
      `Next: cd ${result.root} && npm install && npm run build && npm test && fleet plugins link . --no-install`,
    );
    return {
      root: result.root,
      name: result.name,
      domain: result.domain,
      kind: result.kind,
      path: result.path,
      files: [...result.files.keys()],
    };
  }
}
