/**
 * The base command (contract §2, §7): `--json` prints exactly one document on stdout — the
 * command's result, or the envelope `{ error: { code, message, exitCode } }` built by
 * {@link errorEnvelope} — and the process exits with the stable exit code of the error's code.
 * Human output goes to stdout, warnings and progress to stderr.
 *
 * Only types come from the rest of `@fleet/core` at module level: the core is imported inside the
 * methods, so a command's `--help` and `--version` load no fleet or domain code.
 */
import { Command, Flags, type Interfaces } from '@oclif/core';
import type { ErrorEnvelope, FleetErrorLike, Problem } from '../errors.js';
import type { Registry } from '../registry/registry.js';

/** An error as oclif hands it to `catch` (its own carry `oclif.exit`). */
export type CommandError = Error & { exitCode?: number; oclif?: { exit?: number } };

/**
 * What a failure means for the envelope and the exit code: a fleet error keeps its code and exit
 * code; oclif's parse and flag-validation errors (they carry `oclif.exit`) are usage errors (exit
 * 2), their problems kept on one line; anything else is an internal error (exit 1).
 */
export async function failureOf(error: CommandError): Promise<FleetErrorLike> {
  const { ExitCode, isFleetError } = await import('../errors.js');
  if (isFleetError(error)) return error;
  if (error.oclif?.exit !== undefined) {
    // A headline, one indented line per problem and a "See more help" line: keep the problems.
    const lines = error.message
      .split('\n')
      .map((line) => line.replace(/^Error: /, '').trim())
      .filter(
        (line) =>
          line !== '' &&
          !/^The following errors? occurred:?$/.test(line) &&
          !/^See more help/.test(line),
      );
    return {
      code: 'USAGE',
      message: lines.length > 0 ? lines.join('; ') : 'usage error',
      exitCode: error.oclif.exit === 0 ? ExitCode.ok : ExitCode.usage,
      suggestions: ['see --help'],
    };
  }
  return { code: 'INTERNAL', message: error.message, exitCode: ExitCode.internal };
}

/**
 * The human lines of a failure, for stderr: one problem is one line; several get a headline and a
 * line each; then each hint.
 */
export async function failureLines(failure: FleetErrorLike): Promise<string[]> {
  const { formatProblem } = await import('../errors.js');
  const problems = failure.problems ?? [];
  const lines = [
    problems.length === 1
      ? `Error: ${formatProblem(problems[0] as Problem)}`
      : `Error: ${failure.message}`,
  ];
  if (problems.length > 1)
    for (const problem of problems) lines.push(`  ${formatProblem(problem)}`);
  for (const suggestion of failure.suggestions ?? []) lines.push(`  hint: ${suggestion}`);
  return lines;
}

/** The base every fleet command extends: the CLI's `FleetCommand` and every plugin command. */
export abstract class FleetBaseCommand extends Command {
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

  /** Finds the fleet repository from --repo, $FLEET_REPO or the working directory. */
  protected async findRepo(flag: string | undefined): Promise<string> {
    const { discoverRepo } = await import('../repo/discover.js');
    return discoverRepo({ flag, env: process.env, cwd: process.cwd() });
  }

  /**
   * Fires `fleet:register` across every loaded plugin and assembles the registry. A plugin that
   * fails or is refused is reported on stderr against its name and contributes nothing; the
   * command goes on with the others.
   */
  protected async loadRegistry(): Promise<Registry> {
    const { FLEET_PLUGIN_API_VERSION, REGISTER_HOOK } = await import('../api-version.js');
    const { assembleRegistrations } = await import('../registry/assemble.js');
    const { Registry } = await import('../registry/registry.js');
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

  /** Every failure ends here (see {@link failureOf}); internal errors print no stack but under DEBUG. */
  protected override async catch(error: CommandError): Promise<void> {
    const failure = await failureOf(error);
    process.exitCode = failure.exitCode;
    if (this.jsonEnabled()) {
      const { errorEnvelope } = await import('../errors.js');
      this.logJson(errorEnvelope(failure) satisfies ErrorEnvelope);
      return;
    }
    for (const line of await failureLines(failure)) this.note(line);
    if (failure.code === 'INTERNAL' && process.env['DEBUG']) this.note(String(error.stack));
  }
}
