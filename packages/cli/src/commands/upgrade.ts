import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../base-command.js';
import { acceptanceTimeoutFlag } from '../runtime-flags.js';
import * as core from '@fleet/core';
import {
  UpgradeService,
  renderFleetUpgradeHost,
  renderFleetUpgradeSummary,
  currentNote,
} from '@fleet/operator/upgrade';

export default class Upgrade extends FleetCommand {
  static override summary =
    'Install the canonical runtime on a host through its controller (with --confirm).';
  static override description = `Uses the host's recorded strategy (fleet.yaml upgrade.strategy: tarball) and the generation machinery of the node: the artifact fleet.yaml lists for canonicalVersion is read, its sha256 checked against fleet.yaml and the commit its build record names (package/fleet-build.json, written when it was packed) against fleet.yaml's commit (exit 2 when they differ; a build from a tree with uncommitted changes is named <commit>-dirty and warned about), and the plugins fleet.yaml names (plugins) against the ones the artifact carries (exit 2, ARTIFACT_PLUGINS, naming the plugin), uploaded and checked again on the node (not uploaded when the node's runtime status lists that generation: the node verifies the one it holds and stages from it, and gets the upload if it cannot), staged as an immutable generation, activated (current switched atomically, the supervisor definition updated), and the runtime restarted. The new runtime is accepted only if it reports the exact node id, package and build identity, a compatible protocol, the expected catalog (with the plugins fleet.yaml names, loaded from the new generation) and health within the acceptance timeout; otherwise the node rolls back to the prior generation and verifies it by the same checks.

--resume closes an interrupted transaction whose new runtime is healthy — what \`fleet bootstrap status HOST\` recommends as resume-acceptance (its runner died after activating it): a runner on the node accepts the live runtime again by the same checks and journals it accepted, or fails it and rolls back; then it is accepted from here too.

--all (or --host H repeated) upgrades many hosts: a canary first (the first in fleet.yaml order, or --canary H), alone; then the rest, --concurrency at a time (default 8). The first host that is not accepted stops the run: hosts not started are left untouched and reported skipped. Each host's progress goes to stderr prefixed with its name, its line to stdout as it settles, then a summary; --json prints one document (fleet.upgrade/v1) with every host's outcome. Without --confirm every host's plan is shown.

Without --confirm it prints what it would do and exits 2. Exit 0 when accepted, 3 when the host already runs the canonical build (nothing to upgrade; with --all: every host) or there is nothing to resume, 6 after a verified rollback, when manual recovery is required, or when the transaction's runner died (RUNNER_DIED: the controller answers; \`fleet bootstrap status HOST\` says what to run) — the output says which, 5 when the controller is unreachable (see \`fleet bootstrap\`); over many hosts the most urgent. Ctrl-C leaves the node to finish on its own: the CLI says to follow it with \`fleet bootstrap status HOST\` and exits 130.`;
  static override examples = [
    '<%= config.bin %> upgrade node-01',
    '<%= config.bin %> upgrade node-01 --confirm',
    '<%= config.bin %> upgrade node-01 --confirm --acceptance-timeout 120 --json',
    '<%= config.bin %> upgrade node-01 --resume --confirm',
    '<%= config.bin %> upgrade --all',
    '<%= config.bin %> upgrade --all --canary node-02 --concurrency 2 --confirm',
    '<%= config.bin %> upgrade --host node-01 --host node-03 --confirm --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = { host: Args.string({ description: 'the host', required: false }) };
  static override flags = {
    confirm: Flags.boolean({ description: 'really upgrade', default: false }),
    all: Flags.boolean({
      description:
        'every host of fleet.yaml: a canary first, then the rest; stops at the first that is not accepted',
      default: false,
      exclusive: ['host', 'resume'],
    }),
    host: Flags.string({
      description: 'a host to upgrade (repeatable; as --all over these hosts)',
      multiple: true,
      exclusive: ['resume'],
    }),
    canary: Flags.string({
      description: 'the host upgraded first, alone (default: the first in fleet.yaml order)',
    }),
    concurrency: Flags.integer({
      description: 'hosts upgraded at once after the canary',
      // 8: the canary has proved the release, each node verifies and rolls back on its own, and
      // at most this many are in flight when one fails (docs/contract.md §11).
      default: 8,
      min: 1,
    }),
    resume: Flags.boolean({
      description:
        'close the interrupted transaction `fleet bootstrap status` recommends resuming (resume-acceptance): acceptance again, then accepted or rolled back',
      default: false,
    }),
    'acceptance-timeout': acceptanceTimeoutFlag('new'),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 120_000,
      min: 1,
    }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(Upgrade);
    const fleetWide = flags.all || (flags.host?.length ?? 0) > 0;
    if (fleetWide && args.host !== undefined) {
      throw new core.FleetError('USAGE', 'name a HOST, or --host H… / --all, not both');
    }
    if (!fleetWide && args.host === undefined) {
      throw new core.FleetError('USAGE', 'name the HOST to upgrade, or --host H… / --all', {
        suggestions: ['fleet upgrade node-01', 'fleet upgrade --all'],
      });
    }
    if (!fleetWide && flags.canary !== undefined) {
      throw new core.FleetError('USAGE', '--canary goes with --all or --host H…');
    }
    const root = await this.findRepo(flags.repo);
    const common = {
      root,
      confirm: flags.confirm,
      acceptanceTimeoutMs: flags['acceptance-timeout'] * 1000,
      timeoutMs: flags.timeout,
    };
    const upgrades = await this.service(UpgradeService);
    if (fleetWide) {
      const document = await upgrades.fleet({
        ...common,
        hosts: flags.all ? 'all' : (flags.host ?? []),
        ...(flags.canary === undefined ? {} : { canary: flags.canary }),
        concurrency: flags.concurrency,
        onHostProgress: (host, line) => this.note(`${host}: ${line}`),
        onHost: (host) => {
          if (!this.jsonEnabled()) this.log(core.escapeControl(renderFleetUpgradeHost(host)));
        },
      });
      if (!this.jsonEnabled()) this.log(renderFleetUpgradeSummary(document));
      if (!document.confirmed) {
        this.note('not upgraded: run again with --confirm to upgrade, the canary first');
      }
      process.exitCode = document.exitCode;
      return document as unknown as Record<string, unknown>;
    }
    const host = args.host as string;
    const upgraded = await upgrades.host({
      ...common,
      host,
      resume: flags.resume,
      onProgress: (line) => this.note(`  ${line}`),
      onNote: (line) => this.note(line),
    });
    const { status: _status, describe, ...plan } = upgraded;
    if (upgraded.outcome === 'current') {
      this.note(currentNote(upgraded));
      // A precondition that does not hold (contract §7): exit 3, nothing sent.
      process.exitCode = core.ExitCode.conflict;
      return { ...plan };
    }
    if (upgraded.outcome === 'planned') {
      if (!this.jsonEnabled() && !flags.resume) this.log(`would upgrade ${describe}`);
      this.note(
        `not ${flags.resume ? 'resumed' : 'upgraded'}: run again with --confirm to ${flags.resume ? 'resume' : 'upgrade'} ${host}`,
      );
      process.exitCode = core.ExitCode.usage;
      return { ...plan };
    }
    if (!this.jsonEnabled()) {
      this.log(
        flags.resume
          ? `resumed transaction ${upgraded.transaction ?? '?'} on ${describe}: accepted`
          : `upgraded ${describe}: accepted`,
      );
    }
    return { ...plan, status: upgraded.status };
  }
}
