import { Flags } from '@fleet/core/command';
import type { LabBuildResult } from '@fleet/lab';
import { FleetCommand } from '../../base-command.js';
import * as path from 'node:path';
import { labBuild } from '@fleet/lab';

export default class LabBuild extends FleetCommand {
  static override summary =
    "Pack the runtime from this fleet checkout and pin it in the lab's fleet.yaml.";
  static override description = `Runs npm pack -w packages/cli in the checkout this fleet runs from (its prepack writes the build record and bundles the dependencies; the plugins the lab's fleet.yaml pins, from artifacts/plugins/, are carried in through FLEET_RUNTIME_PLUGINS), writes the tarball to the lab repository's artifacts/fleet-cli-<V>.tgz, adds it to fleet.yaml's artifacts with its sha256 and the commit its own build record names, and commits. --canonical also sets canonicalVersion: V.

V is the checkout's @fleet/cli version unless --version gives another: then the packed package says V (so the node reports V and acceptance holds it) and its build record says the lab set it (versionSet: { by: "fleet lab build", from, to }) — a lab build, never a release. That is the second build upgrade and rollback need on a lab.

Without --dir, the lab whose repository $FLEET_REPO is (eval "$(fleet lab up --dir DIR)" sets it), else .fleet-lab.

Refused before anything is packed (exit 2): a DIR holding no lab, a $FLEET_REPO that is not a lab's repository (without --dir), a V that is not a semantic version or that fleet.yaml already lists, a fleet not run from a checkout, a pinned plugin whose tarball is missing or differs; a fleet.yaml with uncommitted changes (exit 3). Packing takes tens of seconds; progress goes to stderr.`;
  static override examples = [
    '<%= config.bin %> lab build --dir .fleet-runtime-lab',
    '<%= config.bin %> lab build --dir .fleet-runtime-lab --version 0.2.0-lab.1 --canonical',
    'eval "$(<%= config.bin %> lab up --hosts 1 --dir /tmp/lab)" && <%= config.bin %> lab build --version 0.2.0-lab.1 --json',
  ];
  static override flags = {
    dir: Flags.directory({
      description:
        'the lab directory (default: the lab whose repository $FLEET_REPO is, else .fleet-lab)',
    }),
    version: Flags.string({
      description: "the artifact's version (default: the checkout's @fleet/cli version)",
    }),
    canonical: Flags.boolean({
      description: "also make it fleet.yaml's canonicalVersion",
      default: false,
    }),
  };

  async run(): Promise<LabBuildResult> {
    const { flags } = await this.parse(LabBuild);
    const started = Date.now();
    const fleetRepo = process.env['FLEET_REPO'];
    const result = await labBuild({
      ...(flags.dir === undefined ? {} : { dir: flags.dir }),
      ...(fleetRepo === undefined || fleetRepo === '' ? {} : { fleetRepo }),
      ...(flags.version === undefined ? {} : { version: flags.version }),
      canonical: flags.canonical,
      // packages/cli → the workspace root it belongs to
      checkout: path.resolve(this.config.root, '..', '..'),
      progress: (line) => this.note(line),
    });
    for (const warning of result.warnings) this.note(warning);
    if (!this.jsonEnabled()) {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const megabytes = (result.bytes / 1024 / 1024).toFixed(1);
      this.log(
        `Packed @fleet/cli ${result.version}${result.versionSet ? ` (version set by the lab; the checkout is ${result.versionSet.from})` : ''} in ${seconds} s, built from ${result.commit}`,
      );
      this.log(`  ${result.file}  ${megabytes} MB  sha256 ${result.sha256}`);
      for (const plugin of result.plugins)
        this.log(
          `  carries ${plugin.name} ${plugin.version} (sha256 ${plugin.sha256.slice(0, 12)})`,
        );
      this.log(
        `fleet.yaml lists it (canonicalVersion ${result.canonicalVersion}); committed ${result.repoCommit.slice(0, 12)} in ${result.repo}`,
      );
    }
    return result;
  }
}
