/**
 * The base command (contract §2, §7): `--json` prints exactly one document on stdout — the
 * command's result, or the envelope `{ error: { code, message, exitCode } }` built by
 * {@link errorEnvelope} — and the process exits with the stable exit code of the error's code.
 * Human output goes to stdout, warnings and progress to stderr.
 *
 * Only types come from the rest of `@fleet/core` at module level: the core is imported inside the
 * methods, so a command's `--help` and `--version` load no fleet or domain code.
 */
import { realpath } from 'node:fs/promises';
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import type { ErrorEnvelope, FleetErrorLike, Problem } from '../errors.js';
import type { Registry, RegistryStore } from '../registry/registry.js';
import { colourEnabled, loadPalette, type Palette } from './colour.js';

/** An error as oclif hands it to `catch` (its own carry `oclif.exit`). */
export type CommandError = Error & { exitCode?: number; oclif?: { exit?: number } };

/**
 * What a failure means for the envelope and the exit code: a fleet error keeps its code and exit
 * code; oclif's parse and flag-validation errors (they carry `oclif.exit`) are usage errors (exit
 * 2), their problems kept on one line; anything else is an internal error (exit 1).
 */
export async function failureOf(error: CommandError): Promise<FleetErrorLike> {
  // Lazy: core's index entry, kept off `--help` (packages/core/README.md, Lazy imports kept).
  const { ExitCode, isFleetError, usageErrorMessage } = await import('../errors.js');
  if (isFleetError(error)) return error;
  if (error instanceof Errors.CLIError || error.oclif?.exit !== undefined) {
    // A missing argument is named with its description; otherwise the headline and each problem
    // on one line (no "See more help" line).
    return {
      code: 'USAGE',
      message: usageErrorMessage(error.message, missingArgs(error)),
      exitCode: error.oclif?.exit === 0 ? ExitCode.ok : ExitCode.usage,
      suggestions: ['see --help'],
    };
  }
  return { code: 'INTERNAL', message: error.message, exitCode: ExitCode.internal };
}

/** The arguments oclif's RequiredArgsError carries (`args`), if this is one. */
function missingArgs(error: Error): { name?: string; description?: string }[] | undefined {
  const args: unknown = (error as { args?: unknown }).args;
  if (!Array.isArray(args)) return undefined;
  return args.flatMap((arg: unknown) => {
    if (typeof arg !== 'object' || arg === null) return [];
    const { name, description } = arg as { name?: unknown; description?: unknown };
    return [
      {
        ...(typeof name === 'string' ? { name } : {}),
        ...(typeof description === 'string' ? { description } : {}),
      },
    ];
  });
}

/**
 * The human lines of a failure, for stderr: one problem is one line; several get a headline and a
 * line each; a refused action's output tail (`toolOutput`) a line each, prefixed `  | `, control
 * characters escaped; then each hint.
 */
export async function failureLines(failure: FleetErrorLike): Promise<string[]> {
  // Lazy: core's index entry, kept off `--help` (packages/core/README.md, Lazy imports kept).
  const { formatProblem } = await import('../errors.js');
  const { escapeControl } = await import('../report/escape-control.js');
  const problems = failure.problems ?? [];
  const lines = [
    problems.length === 1
      ? `Error: ${formatProblem(problems[0] as Problem)}`
      : `Error: ${failure.message}`,
  ];
  // A refused action's own words (its output tail), under the one line, marked as the tool's.
  if (failure.toolOutput)
    for (const line of escapeControl(failure.toolOutput).split('\n')) lines.push(`  | ${line}`);
  if (problems.length > 1)
    for (const problem of problems) lines.push(`  ${formatProblem(problem)}`);
  for (const suggestion of failure.suggestions ?? []) lines.push(`  hint: ${suggestion}`);
  return lines;
}

/**
 * The last failure a command of this process reported through {@link FleetBaseCommand.catch}: a
 * command run in process (`report-run` runs its report verb, or a plugin's `harness reconcile`,
 * so) fails by setting the exit code, not by throwing, and its caller logs what it was
 * (docs/scheduled-reports.md). Shared by the CLI's verbs and every plugin's.
 */
export const reportedFailure: { last: FleetErrorLike | null } = { last: null };

/** The base every fleet command extends: the CLI's `FleetCommand` and every plugin command. */
export abstract class FleetBaseCommand extends Command {
  static override enableJsonFlag = true;

  /**
   * Flags every command takes: `--color`/`--no-color` (see {@link FleetBaseCommand.palette}). A
   * command that sets its own `baseFlags` starts from these (or from `repoFlags`, which hold them).
   */
  static globalFlags = {
    color: Flags.boolean({
      allowNo: true,
      description:
        'colour human output (default: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it); never with --json',
      helpGroup: 'GLOBAL',
    }),
  };

  static override baseFlags = { ...FleetBaseCommand.globalFlags };

  /** Flags of commands that work on the fleet repository (with the global ones). */
  static repoFlags = {
    ...FleetBaseCommand.globalFlags,
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

  /** `--color` (true), `--no-color` (false) or neither, as the last {@link parse} read it. */
  private colourFlag: boolean | undefined;

  /** oclif's parse, keeping `--color`/`--no-color` for {@link palette}. */
  protected override async parse<
    F extends Record<string, unknown>,
    B extends Record<string, unknown>,
    A extends Record<string, unknown>,
  >(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const parsed = await super.parse(options, argv);
    const colour: unknown = (parsed.flags as Record<string, unknown>)['color'];
    this.colourFlag = typeof colour === 'boolean' ? colour : undefined;
    return parsed;
  }

  /**
   * The palette for this command's human output on stdout: colours on a terminal, plain when
   * piped, with `--json`, `--no-color` or a non-empty `NO_COLOR` (the order is `colourEnabled`'s).
   */
  protected palette(): Promise<Palette> {
    return loadPalette(
      colourEnabled({
        flag: this.colourFlag,
        json: this.jsonEnabled(),
        env: process.env,
        isTTY: process.stdout.isTTY === true,
      }),
    );
  }

  /**
   * The `--json` document of a verb that used the fleet repository carries it as `repository`
   * (its real path, first), as the human output names it on its first line (contract §7): which
   * repository answered is never left to guess when `$FLEET_REPO` or `--repo` chose it.
   */
  protected override toSuccessJson(result: unknown): unknown {
    if (this.repoRoot === undefined) return result;
    if (!(this.constructor as typeof FleetBaseCommand).repositoryInJson) return result;
    if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
    // `validate` names it `repo` already.
    if (Object.hasOwn(result, 'repository') || Object.hasOwn(result, 'repo')) return result;
    return { repository: this.repoRoot, ...result };
  }

  /** Writes one line to stderr, also in --json mode (stdout stays one JSON document). */
  protected note(message: string): void {
    process.stderr.write(`${message}\n`);
  }

  /**
   * Where a verb names the repository it uses: `stdout`, its human output's first line (a verb
   * that touches hosts); `stderr` when stdout carries something else (a file's bytes);
   * `commit`, on the commit line the CLI's `noteSource` prints; `none`, not at all.
   */
  static repoLine: 'stdout' | 'stderr' | 'commit' | 'none' = 'stdout';

  /**
   * Whether `--json` carries `repository` ({@link FleetBaseCommand.toSuccessJson}); false for a verb whose document
   * is read back as it is (`bootstrap plan`: the sealed plan `bootstrap apply` reads).
   */
  static repositoryInJson = true;

  /** The fleet repository this command found, its real path (set by {@link findRepo}). */
  protected repoRoot: string | undefined;

  /**
   * A node-path argument (`~/…`), as core's one parser reads it: an unquoted `~/…` the shell
   * expanded under the operator's `$HOME` is mapped back (and said so on stderr); anything else
   * not `~/`-relative is `PATH_INVALID` (exit 2) saying to quote it.
   */
  protected async nodePath(raw: string): Promise<string> {
    // Lazy: core's index entry, kept off `--help` (packages/core/README.md, Lazy imports kept).
    const { parseNodePathArgument } = await import('../paths.js');
    const parsed = parseNodePathArgument(raw, process.env['HOME']);
    if (parsed.mappedFromHome) this.note(`note: ${raw} read as ${parsed.path} (the node's home)`);
    return parsed.path;
  }

  /**
   * Finds the fleet repository from --repo, $FLEET_REPO or the working directory, names it (see
   * {@link FleetBaseCommand.repoLine}), and warns on stderr when the working directory lies
   * inside another fleet repository than the one used (a leftover `$FLEET_REPO`).
   */
  protected async findRepo(flag: string | undefined): Promise<string> {
    // Lazy: core's index entry, kept off `--help` (packages/core/README.md, Lazy imports kept).
    const { discoverRepo, enclosingRepo, otherRepoWarning } = await import('../repo/discover.js');
    const root = await discoverRepo({ flag, env: process.env, cwd: process.cwd() });
    const real = (dir: string) => realpath(dir).catch(() => dir);
    this.repoRoot = await real(root);
    const enclosing = await enclosingRepo(process.cwd());
    const warning = otherRepoWarning({
      used: this.repoRoot,
      enclosing: enclosing === null ? null : await real(enclosing),
      flag,
    });
    if (warning !== null) this.note(warning);
    const where = (this.constructor as typeof FleetBaseCommand).repoLine;
    if (!this.jsonEnabled()) {
      if (where === 'stdout') this.log(`repository ${this.repoRoot}`);
      if (where === 'stderr') this.note(`repository ${this.repoRoot}`);
    }
    return root;
  }

  /**
   * Fires `fleet:register` across every loaded plugin and assembles the registry. A plugin that
   * fails or is refused is reported on stderr against its name and contributes nothing; the
   * command goes on with the others. The registrations go into `store` when given (the CLI's
   * verbs: their container, docs/adr/0027-the-registry-lives-in-the-container.md), else a map.
   */
  protected async loadRegistry(store?: RegistryStore): Promise<Registry> {
    // Lazy: core's index entry, kept off `--help` (packages/core/README.md, Lazy imports kept).
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
    return new Registry(accepted, problems, store);
  }

  /** Every failure ends here (see {@link failureOf}); internal errors print no stack but under DEBUG. */
  protected override async catch(error: CommandError): Promise<void> {
    const failure = await failureOf(error);
    reportedFailure.last = failure;
    process.exitCode = failure.exitCode;
    if (this.jsonEnabled()) {
      // Lazy: core's index entry, kept off `--help` (packages/core/README.md, Lazy imports kept).
      const { errorEnvelope } = await import('../errors.js');
      this.logJson(errorEnvelope(failure) satisfies ErrorEnvelope);
      return;
    }
    for (const line of await failureLines(failure)) this.note(line);
    if (failure.code === 'INTERNAL' && process.env['DEBUG']) this.note(String(error.stack));
  }
}
