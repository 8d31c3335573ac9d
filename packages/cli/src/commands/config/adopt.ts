import { Args, Flags } from '@oclif/core';
import { FleetCommand } from '../../base-command.js';

export interface AdoptResult {
  readonly host: string;
  readonly path: string;
  readonly domain: string;
  readonly mirrorPath: string;
  readonly operationId: string;
  readonly liveSha256: string;
  /** The new commit, or null when the mirror already held exactly this capture. */
  readonly commit: string | null;
  readonly substitutions: Readonly<Record<string, number>>;
}

export default class ConfigAdopt extends FleetCommand {
  static override summary =
    "Bring a host's live file into the repository (a commit with provenance).";
  static override description = `Captures the live file (redacted on the node: secret values back to {{ secret.NAME }}), replaces the host's variable values with their {{ host.NAME }} placeholders, refuses it if anything still looks like a credential (exit 7, naming line numbers, never values, unless --allow-secret-line), writes it to mirror/<host>/<domain>/<file> and commits it with the trailers Fleet-Adopted-From, Fleet-Live-Sha256, Fleet-Operation and Fleet-Controller. Promoting it to the canonical file is an ordinary reviewed change.

Refuses (exit 3) when that mirror path has uncommitted changes.`;
  static override examples = [
    '<%= config.bin %> config adopt node-01 ~/.claude/CLAUDE.md',
    '<%= config.bin %> config adopt node-01 ~/.config/router/router.yaml --message "router: keep the hot fix" --allow-secret-line 12',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    path: Args.string({ description: 'the live file, ~/-relative', required: true }),
  };
  static override flags = {
    message: Flags.string({ char: 'm', description: 'commit message (default: adopt HOST:PATH)' }),
    'allow-secret-line': Flags.integer({
      description: 'accept a secret-scan finding on this line (repeatable)',
      multiple: true,
      min: 1,
    }),
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 10_000, min: 1 }),
  };

  async run(): Promise<AdoptResult> {
    const { args, flags } = await this.parse(ConfigAdopt);
    const root = await this.findRepo(flags.repo);
    const core = await import('@fleet/core');
    const { loadFleetContext } = await import('../../config/context.js');
    const registry = await this.loadRegistry();
    const context = await loadFleetContext({ root, registry, timeoutMs: flags.timeout });
    const declarations = new Map(
      [...context.domains].map(([name, runtime]) => [name, runtime.declaration]),
    );
    const { declaration, file } = core.managedFileAt(
      context.repo,
      args.host,
      args.path,
      declarations,
    );
    let adopter;
    try {
      adopter = await registry.adopter(declaration.domain);
    } catch (error) {
      if (!core.isFleetError(error) || error.code !== 'DOMAIN_BEHAVIOUR_ABSENT') throw error;
    }
    const operationId = core.newOperationId();
    const log = (
      outcome: 'ok' | 'unchanged' | 'refused' | 'failed' | 'unreachable',
      code: string | null,
      exitCode: number,
      detail: string,
    ) =>
      core.recordOperatorVerb({
        verb: 'config adopt',
        host: args.host,
        operationId,
        domain: declaration.domain,
        paths: [args.path],
        outcome,
        code,
        exitCode,
        detail,
      });
    try {
      const capture = await context.client(args.host).capture({ operationId, path: args.path });
      const candidate = core.adoptCandidate({
        host: args.host,
        declaration,
        file,
        capture: { ...capture, host: args.host },
        variables: core.hostVariables(context.repo, args.host),
        adopter,
        allowSecretLines: flags['allow-secret-line'] ?? [],
      });
      const commit = await core.commitAdoption({
        git: context.git,
        root,
        candidate,
        message: core.adoptMessage({
          message: flags.message ?? `adopt ${args.host}:${args.path}`,
          host: args.host,
          operationId,
          capture,
        }),
      });
      await log(
        commit ? 'ok' : 'unchanged',
        null,
        0,
        commit ? `committed ${commit}` : 'the mirror already held this capture',
      );
      this.log(
        commit
          ? `Adopted ${args.host}:${args.path} as ${candidate.mirrorPath} (commit ${commit.slice(0, 12)}).`
          : `${candidate.mirrorPath} already holds exactly this capture: nothing to commit.`,
      );
      return {
        host: args.host,
        path: args.path,
        domain: declaration.domain,
        mirrorPath: candidate.mirrorPath,
        operationId,
        liveSha256: capture.sha256,
        commit,
        substitutions: candidate.substitutions,
      };
    } catch (error) {
      const failure = core.asFleetError(error);
      const refused =
        failure.exitCode === core.ExitCode.policy || failure.exitCode === core.ExitCode.conflict;
      await log(
        failure.code === 'HOST_UNREACHABLE' ? 'unreachable' : refused ? 'refused' : 'failed',
        failure.code,
        failure.exitCode,
        failure.message,
      );
      throw error;
    }
  }
}
