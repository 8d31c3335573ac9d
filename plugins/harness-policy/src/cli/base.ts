/**
 * The base of this plugin's commands. A plugin cannot import the CLI's base command (plugins
 * depend on `@fleet/core` only), so this is the small local equivalent, keeping the same contract
 * (contract §2, §7): `--json` prints exactly one document on stdout — the result, or the envelope
 * `{ error: { code, message, exitCode } }` built by core's `errorEnvelope` — and the process exits
 * with the stable exit code of the error's code. Human output goes to stdout, notes to stderr.
 *
 * Only types come from `@fleet/core` at module level: the command's `--help` loads no fleet code.
 * It lives outside `src/commands/`, where oclif would take it for a command.
 */
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import type { FleetErrorLike, Problem, Registry } from '@fleet/core';

export abstract class PluginCommand extends Command {
  static override enableJsonFlag = true;

  /** Flags of commands that work on the fleet repository (as the CLI's commands spell them). */
  static repoFlags = {
    repo: Flags.directory({
      description:
        'the fleet repository (default: $FLEET_REPO, else the nearest fleet.yaml above the working directory)',
      helpGroup: 'GLOBAL',
    }),
  };

  /** The one JSON document of `--json`, written as is (no colours, one write). */
  override logJson(json: unknown): void {
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  }

  /** One line on stderr, also in --json mode (stdout stays one JSON document). */
  protected note(message: string): void {
    process.stderr.write(`${message}\n`);
  }

  /**
   * Finds the fleet repository as the CLI does, names it on the human output's first line and
   * warns on stderr when the working directory lies inside another fleet repository.
   */
  protected async findRepo(flag: string | undefined): Promise<string> {
    const { discoverRepo, enclosingRepo, otherRepoWarning } = await import('@fleet/core');
    const root = await discoverRepo({ flag, env: process.env, cwd: process.cwd() });
    const { realpath } = await import('node:fs/promises');
    const real = (dir: string) => realpath(dir).catch(() => dir);
    const used = await real(root);
    const enclosing = await enclosingRepo(process.cwd());
    const warning = otherRepoWarning({
      used,
      enclosing: enclosing === null ? null : await real(enclosing),
      flag,
    });
    if (warning !== null) this.note(warning);
    if (!this.jsonEnabled()) this.log(`repository ${used}`);
    return root;
  }

  /**
   * Fires `fleet:register` across every loaded plugin (this one included) and assembles the
   * registry exactly as the CLI does; refused plugins are reported on stderr.
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
   * usage errors (exit 2); anything else is an internal error (exit 1), without a stack.
   */
  protected override async catch(
    error: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<void> {
    const core = await import('@fleet/core');
    const failure = toFailure(error, core);
    process.exitCode = failure.exitCode;
    if (this.jsonEnabled()) {
      this.logJson(core.errorEnvelope(failure));
      return;
    }
    const problems = failure.problems ?? [];
    if (problems.length === 1) this.note(`Error: ${core.formatProblem(problems[0] as Problem)}`);
    else this.note(`Error: ${failure.message}`);
    if (problems.length > 1)
      for (const problem of problems) this.note(`  ${core.formatProblem(problem)}`);
    for (const suggestion of failure.suggestions ?? []) this.note(`  hint: ${suggestion}`);
    if (failure.code === 'INTERNAL' && process.env['DEBUG']) this.note(String(error.stack));
  }
}

function toFailure(
  error: Error & { exitCode?: number; oclif?: { exit?: number } },
  core: typeof import('@fleet/core'),
): FleetErrorLike {
  if (core.isFleetError(error)) return error;
  if (error instanceof Errors.CLIError || error.oclif?.exit !== undefined) {
    return {
      code: 'USAGE',
      message: core.usageErrorMessage(error.message),
      exitCode: error.oclif?.exit === 0 ? core.ExitCode.ok : core.ExitCode.usage,
      suggestions: ['see --help'],
    };
  }
  return { code: 'INTERNAL', message: error.message, exitCode: core.ExitCode.internal };
}
