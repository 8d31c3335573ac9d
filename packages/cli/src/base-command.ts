/**
 * The one base command every fleet command extends. It owns the `--json` contract (contract §2, §7):
 * stdout carries exactly one JSON document — the command's result, or the error envelope
 * `{ error: { code, message, exitCode } }` — and the process exits with the stable exit code of
 * the error's code. Human output goes to stdout, warnings and progress to stderr.
 *
 * Only types are imported from `@fleet/core` at module level: commands import it inside `run()`,
 * so `--help` and `--version` load no fleet or domain code.
 */
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import type { ErrorEnvelope, FleetErrorLike, Problem, Registry } from '@fleet/core';

export type FleetFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof FleetCommand)['baseFlags'] & T['flags']
>;

/**
 * The last failure a command of this process reported through {@link FleetCommand.catch}: a
 * command run in process (`report-run` runs its report verb so) fails by setting the exit code,
 * not by throwing, and its caller logs what it was (docs/scheduled-reports.md).
 */
export const reportedFailure: { last: FleetErrorLike | null } = { last: null };

export abstract class FleetCommand extends Command {
  static override enableJsonFlag = true;

  /** Flags of commands that work on the fleet repository. */
  static repoFlags = {
    repo: Flags.directory({
      description:
        'the fleet repository (default: $FLEET_REPO, else the nearest fleet.yaml above the working directory)',
      helpGroup: 'GLOBAL',
    }),
  };

  /**
   * The one JSON document of `--json`, written as is: oclif's default colourises it token by
   * token, which costs more than the work itself for a 1,000-host report and puts escape codes
   * into what a terminal user may copy.
   */
  override logJson(json: unknown): void {
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  }

  /** Writes one line to stderr, also in --json mode (stdout stays one JSON document). */
  protected note(message: string): void {
    process.stderr.write(`${message}\n`);
  }

  /** The fleet repository this command found (the audit heads it saw are kept under it). */
  protected repoRoot: string | undefined;

  /** Finds the fleet repository from --repo, $FLEET_REPO or the working directory. */
  protected async findRepo(flag: string | undefined): Promise<string> {
    const { discoverRepo } = await import('@fleet/core');
    const root = await discoverRepo({ flag, env: process.env, cwd: process.cwd() });
    const { realpath } = await import('node:fs/promises');
    this.repoRoot = await realpath(root).catch(() => root);
    return root;
  }

  /**
   * After every verb that talked to a node: the audit heads its answers carried are kept in the
   * operator's state (core client/audit-heads.ts), so `fleet audit verify --host` can tell a node
   * log rewritten behind the operator's back. Never fails the verb: a warning at most.
   */
  protected override async finally(error: Error | undefined): Promise<unknown> {
    if (this.repoRoot !== undefined) {
      const { recordSeenHeads, takeObservedHeads } = await import('@fleet/core');
      const heads = takeObservedHeads();
      if (heads.size > 0) {
        await recordSeenHeads(this.repoRoot, heads, (this.id ?? 'fleet').replace(/:/g, ' ')).catch(
          (failure: unknown) =>
            this.note(
              `warning: the audit heads seen could not be kept: ${(failure as Error).message}`,
            ),
        );
      }
    }
    return super.finally(error);
  }

  /**
   * Fires `fleet:register` across every loaded plugin and assembles the registry. A plugin that
   * fails or is refused is reported on stderr against its name and contributes nothing; the
   * command goes on with the others.
   */
  protected async loadRegistry(): Promise<Registry> {
    const { FLEET_PLUGIN_API_VERSION, REGISTER_HOOK, Registry, assembleRegistrations } =
      await import('@fleet/core');
    const { successes, failures } = await this.config.runHook(
      REGISTER_HOOK,
      { apiVersion: FLEET_PLUGIN_API_VERSION },
      10_000,
      true,
    );
    const ref = (plugin: Interfaces.Plugin) => ({
      name: plugin.name,
      version: plugin.version,
      type: plugin.type,
    });
    const { accepted, problems } = assembleRegistrations(
      [
        ...successes.map((s) => ({
          plugin: ref(s.plugin),
          ok: true as const,
          result: s.result as unknown,
        })),
        ...failures.map((f) => ({ plugin: ref(f.plugin), ok: false as const, error: f.error })),
      ],
      FLEET_PLUGIN_API_VERSION,
    );
    for (const problem of problems) this.note(`warning: ${problem.message}`);
    return new Registry(accepted, problems);
  }

  /**
   * Every failure ends here: a fleet error keeps its code and exit code; oclif's parse errors are
   * usage errors (exit 2); anything else is an internal error (exit 1), reported without a stack.
   */
  protected override async catch(
    error: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<void> {
    const failure = await toFleetFailure(error);
    reportedFailure.last = failure;
    process.exitCode = failure.exitCode;
    if (this.jsonEnabled()) {
      const { errorEnvelope } = await import('@fleet/core');
      this.logJson(errorEnvelope(failure) satisfies ErrorEnvelope);
      return;
    }
    const { formatProblem } = await import('@fleet/core');
    const problems = failure.problems ?? [];
    // One problem is one line; several get a headline and a line each.
    if (problems.length === 1) this.note(`Error: ${formatProblem(problems[0] as Problem)}`);
    else this.note(`Error: ${failure.message}`);
    if (problems.length > 1)
      for (const problem of problems) this.note(`  ${formatProblem(problem)}`);
    for (const suggestion of failure.suggestions ?? []) this.note(`  hint: ${suggestion}`);
    if (failure.code === 'INTERNAL' && process.env['DEBUG']) this.note(String(error.stack));
  }
}

async function toFleetFailure(
  error: Error & { exitCode?: number; oclif?: { exit?: number } },
): Promise<FleetErrorLike> {
  const { ExitCode, isFleetError } = await import('@fleet/core');
  if (isFleetError(error)) return error;
  if (error instanceof Errors.CLIError || error.oclif?.exit !== undefined) {
    const message =
      error.message.split('\n').filter((line) => line.trim() !== '')[0] ?? 'usage error';
    return {
      code: 'USAGE',
      message: message.replace(/^Error: /, '').trim(),
      exitCode: error.oclif?.exit === 0 ? ExitCode.ok : ExitCode.usage,
      suggestions: ['see --help'],
    };
  }
  return { code: 'INTERNAL', message: error.message, exitCode: ExitCode.internal };
}
