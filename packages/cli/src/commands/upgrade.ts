import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../base-command.js';
import { acceptanceTimeoutFlag } from '../runtime-flags.js';

export default class Upgrade extends FleetCommand {
  static override summary =
    'Install the canonical runtime on a host through its controller (with --confirm).';
  static override description = `Uses the host's recorded strategy (fleet.yaml upgrade.strategy: tarball) and the generation machinery of the node: the artifact fleet.yaml lists for canonicalVersion is read, its sha256 checked against fleet.yaml and the commit its build record names (package/fleet-build.json, written when it was packed) against fleet.yaml's commit (exit 2 when they differ; a build from a tree with uncommitted changes is named <commit>-dirty and warned about), and the plugins fleet.yaml names (plugins) against the ones the artifact carries (exit 2, ARTIFACT_PLUGINS, naming the plugin), uploaded and checked again on the node (not uploaded when the node's runtime status lists that generation: the node verifies the one it holds and stages from it, and gets the upload if it cannot), staged as an immutable generation, activated (current switched atomically, the supervisor definition updated), and the runtime restarted. The new runtime is accepted only if it reports the exact node id, package and build identity, a compatible protocol, the expected catalog (with the plugins fleet.yaml names, loaded from the new generation) and health within the acceptance timeout; otherwise the node rolls back to the prior generation and verifies it by the same checks.

Without --confirm it prints what it would do and exits 2. Exit 0 when accepted, 3 when the host already runs the canonical build (nothing to upgrade), 6 after a verified rollback or when manual recovery is required (the output says which), 5 when the controller is unreachable (see \`fleet bootstrap\`). Ctrl-C leaves the node to finish on its own: the CLI says to follow it with \`fleet bootstrap status HOST\` and exits 130.`;
  static override examples = [
    '<%= config.bin %> upgrade node-01',
    '<%= config.bin %> upgrade node-01 --confirm',
    '<%= config.bin %> upgrade node-01 --confirm --acceptance-timeout 120 --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = { host: Args.string({ description: 'the host', required: true }) };
  static override flags = {
    confirm: Flags.boolean({ description: 'really upgrade', default: false }),
    'acceptance-timeout': acceptanceTimeoutFlag('new'),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 120_000,
      min: 1,
    }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(Upgrade);
    const root = await this.findRepo(flags.repo);
    const core = await import('@fleet/core');
    const { loadHostRuntime } = await import('@fleet/operator/runtime/host.js');
    const { canonicalArtifact, dirtyWarning } = await import('@fleet/operator/runtime/artifact.js');
    const host = await loadHostRuntime(root, args.host, { timeoutMs: flags.timeout });
    if (host.entry.upgrade?.strategy !== 'tarball') {
      throw new core.FleetError(
        'USAGE',
        `${args.host} has no recorded upgrade strategy (fleet.yaml hosts.${args.host}.upgrade: { strategy: tarball })`,
      );
    }
    const artifact = await canonicalArtifact(root, host.repo.manifest);
    const dirty = dirtyWarning(artifact);
    if (dirty !== null) this.note(dirty);
    const target = core.targetExpectation({
      nodeId: host.nodeId,
      host: host.entry,
      artifact: artifact.identity,
      plugins: host.repo.manifest.plugins,
    });
    const identity = await host.client.identity();
    const plan = {
      host: args.host,
      nodeId: host.nodeId,
      supervisor: host.entry.supervisor,
      strategy: host.entry.upgrade.strategy,
      from: { version: identity.version, build: identity.build.sha256 },
      to: {
        version: artifact.identity.version,
        build: artifact.identity.sha256,
        commit: artifact.identity.commit,
        file: artifact.identity.file,
      },
    };
    const { acceptRuntime } = await import('@fleet/controller');
    if (
      identity.build.sha256 === artifact.identity.sha256 &&
      acceptRuntime(target, identity).accepted
    ) {
      this.note(
        `${args.host} already runs ${artifact.identity.version} (${artifact.identity.sha256.slice(0, 12)}) and passes acceptance: nothing to upgrade (name a newer build as canonicalVersion and in artifacts in fleet.yaml)`,
      );
      // A precondition that does not hold (contract §7): exit 3, nothing sent.
      process.exitCode = core.ExitCode.conflict;
      return { ...plan, outcome: 'current' };
    }
    const describe = `${args.host}: ${identity.version} (${identity.build.sha256?.slice(0, 12) ?? 'development build'}) -> ${artifact.identity.version} (${artifact.identity.sha256.slice(0, 12)}) under ${host.entry.supervisor}`;
    if (!flags.confirm) {
      if (!this.jsonEnabled()) this.log(`would upgrade ${describe}`);
      this.note(`not upgraded: run again with --confirm to upgrade ${args.host}`);
      process.exitCode = core.ExitCode.usage;
      return { ...plan, confirmed: false };
    }
    const { applyThroughController } = await import('@fleet/operator/runtime/apply.js');
    const { recordRuntimeVerb } = await import('@fleet/operator/runtime/record.js');
    this.note(`upgrading ${describe}`);
    const { followableOnInterrupt } = await import('@fleet/operator/runtime/interrupt.js');
    const applied = await followableOnInterrupt(args.host, () =>
      applyThroughController({
        client: host.client,
        kind: 'upgrade',
        supervisor: host.entry.supervisor,
        planId: null,
        target,
        artifact,
        acceptanceTimeoutMs: flags['acceptance-timeout'] * 1000,
        onProgress: (line) => this.note(`  ${line}`),
        // Where fleet.yaml says the controller is, and its pin (issue 35): the upgraded
        // controller listens there, with the certificate the node keeps.
        listen: core.controllerListen(host.entry.controller),
        pinned: host.entry.tls?.fingerprint ?? null,
      }),
    );
    await recordRuntimeVerb('upgrade', args.host, applied.transaction, applied.verdict);
    if (!applied.verdict.done) {
      const { unfinished } = await import('@fleet/operator/runtime/follow.js');
      throw await unfinished(args.host, applied.transaction, applied.status, applied.runnerLog);
    }
    if (applied.verdict.error) throw applied.verdict.error;
    if (!this.jsonEnabled()) this.log(`upgraded ${describe}: accepted`);
    return {
      ...plan,
      transaction: applied.transaction,
      outcome: applied.verdict.outcome,
      status: applied.status,
    };
  }
}
