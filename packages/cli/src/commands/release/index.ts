import { FleetCommand } from '../../base-command.js';
import { Flags } from '@fleet/core/command';
import * as path from 'node:path';
import { ReleaseService } from '@fleet/operator/release';

export default class Release extends FleetCommand {
  static override summary =
    "Pack the runtime of the fleet you run and pin it as fleet.yaml's canonicalVersion.";
  static override description = `Runs npm pack -w packages/cli in the checkout this fleet runs from (its prepack writes the build record — the commit it was packed from — bundles the dependencies and carries the plugins fleet.yaml pins), keeps the tarball in the repository's artifact store .fleet/artifacts/<sha256>.tgz (git-ignored: the bytes stay out of history), signs it (ssh-keygen -Y sign, namespace fleet-release, an Ed25519 key: --signing-key or signing_ed25519 beside your credentials file, made on first use; its public key joins fleet.yaml's signing.keys), pins it in fleet.yaml's artifacts with its sha256 and commit, sets canonicalVersion, and commits. The version is the checkout's @fleet/cli version unless --version gives another (then written into the packed package, and its build record says versionSet: { by: "fleet release", from, to }); --plugin DIR packs a plugin package, puts its tarball in artifacts/plugins/, pins it in fleet.yaml's plugins and carries it, in the same release; --node PLATFORM ships the npm registry's Node.js for that platform (node-<platform>, kept in the store and pinned beside the runtime) so that fleet host add can enroll a host without Node.js. Packing one commit twice gives the same bytes: a version already pinned at the same sha256 changes nothing; at another sha256 it is refused (bump the version). fleet release verify rebuilds a pinned release and compares it. Without --confirm it says what it would pack. Packing takes about a minute; progress goes to stderr. See docs/releases.md.`;
  static override examples = [
    '<%= config.bin %> release',
    '<%= config.bin %> release --confirm',
    '<%= config.bin %> release --confirm --json',
    '<%= config.bin %> release --confirm --version 0.1.1 --plugin ../fleet-plugin-npmrc',
    '<%= config.bin %> release --confirm --node linux-x64 --node linux-arm64   # hosts need no Node.js',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    confirm: Flags.boolean({ description: 'really pack, sign, pin and commit', default: false }),
    version: Flags.string({
      description:
        "the version to release (default: the checkout's @fleet/cli version; another is written into the package and its build record says so)",
    }),
    plugin: Flags.directory({
      description:
        'a plugin package directory to pack, pin in fleet.yaml and carry (repeat for more)',
      multiple: true,
      exists: true,
    }),
    node: Flags.string({
      description:
        'ship Node.js for PLATFORM (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win-x64) from the npm registry, or PLATFORM=FILE from a node-<platform> tarball; repeat for more',
      multiple: true,
    }),
    'signing-key': Flags.file({
      description:
        'the Ed25519 private key to sign with (default: signing_ed25519 beside your credentials file, made on first use)',
      exists: true,
    }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { flags } = await this.parse(Release);
    const service = await this.service(ReleaseService);
    const result = await service.release({
      root: await this.findRepo(flags.repo),
      // packages/cli → the workspace root it belongs to
      checkout: path.resolve(this.config.root, '..', '..'),
      confirm: flags.confirm,
      ...(flags['signing-key'] === undefined ? {} : { signingKey: flags['signing-key'] }),
      ...(flags.version === undefined ? {} : { version: flags.version }),
      ...(flags.plugin === undefined ? {} : { plugins: flags.plugin }),
      ...(flags.node === undefined ? {} : { nodes: flags.node }),
      progress: (line) => this.note(line),
    });
    for (const warning of result.warnings) this.note(warning);
    if (result.outcome === 'planned') {
      this.log(
        `release would pack @fleet/cli ${result.version} from ${result.checkout}${result.plugins.length > 0 ? ` with ${result.plugins.map((p) => `${p.name} ${p.version}`).join(', ')}` : ''}, keep it in .fleet/artifacts/ and pin it as canonicalVersion. Run again with --confirm.`,
      );
    } else if (result.outcome === 'unchanged') {
      this.log(
        `@fleet/cli ${result.version} is pinned already with these very bytes (sha256 ${result.sha256}): nothing changed.`,
      );
    } else {
      this.log(
        `Released @fleet/cli ${result.version}: ${result.file} (${result.bytes} bytes), built from ${result.commit}, signed by ${result.signedBy}; canonicalVersion, commit ${result.repoCommit?.slice(0, 12)}.`,
      );
    }
    return { ...result };
  }
}
