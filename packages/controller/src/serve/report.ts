/**
 * How the controller's own entries (`controller serve`, `controller runtime-run`: bin/run.js hands
 * both over before oclif is imported) report a failure: as the CLI's base command does (contract
 * §7) — one `Error:` line, its problems and hints on stderr, or the error envelope on stdout under
 * `--json` — with the error's exit code.
 */
import {
  ExitCode,
  errorEnvelope,
  formatProblem,
  isFleetError,
  type FleetErrorLike,
} from '@fleet/core/node';

function asFailure(error: unknown): FleetErrorLike {
  if (isFleetError(error)) return error;
  return {
    code: 'INTERNAL',
    message: error instanceof Error ? error.message : String(error),
    exitCode: ExitCode.internal,
  };
}

/** Reports `error` on stderr (or stdout under `json`) and sets the process's exit code. */
export function reportFailure(error: unknown, json: boolean): void {
  const failure = asFailure(error);
  process.exitCode = failure.exitCode;
  if (json) {
    process.stdout.write(`${JSON.stringify(errorEnvelope(failure), null, 2)}\n`);
    return;
  }
  const problems = failure.problems ?? [];
  const lines = [
    `Error: ${problems.length === 1 && problems[0] ? formatProblem(problems[0]) : failure.message}`,
    ...(problems.length > 1 ? problems.map((problem) => `  ${formatProblem(problem)}`) : []),
    ...(failure.suggestions ?? []).map((suggestion) => `  hint: ${suggestion}`),
  ];
  if (failure.code === 'INTERNAL' && process.env['DEBUG'] && error instanceof Error) {
    lines.push(String(error.stack));
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}
