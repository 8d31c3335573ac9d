import type { ProcessRequest, ProcessResult, ProcessRunner } from '@fleet/core';

/** A command-line prefix (`systemctl --user restart`) or a predicate over the request. */
export type ProcessMatcher = string | ((request: ProcessRequest) => boolean);
/** The answer to a matched request: fields of the result (the rest default to success), or a function. */
export type ScriptedResult =
  | Partial<ProcessResult>
  | ((request: ProcessRequest) => Partial<ProcessResult> | Promise<Partial<ProcessResult>>);

interface Rule {
  readonly matches: (request: ProcessRequest) => boolean;
  readonly result: ScriptedResult;
  remaining: number;
}

/** The command line of a request, for matching and for readable assertions. */
export function commandLine(request: ProcessRequest): string {
  return [request.command, ...request.args].join(' ');
}

/**
 * A process runner that runs nothing: it records every request and answers from a script.
 * A request no rule matches fails the test loudly (exit 127 and a clear stderr), so a domain that
 * runs an unexpected command cannot pass by accident.
 */
export class RecordedProcessRunner implements ProcessRunner {
  /** Every request, in order, matched or not. */
  readonly calls: ProcessRequest[] = [];
  private readonly rules: Rule[] = [];

  /**
   * Answers requests matching `matcher` — a command-line prefix (`systemctl --user restart`) or a
   * predicate — with `result`, `times` times (default: always). Later rules win over earlier ones.
   */
  on(matcher: ProcessMatcher, result: ScriptedResult = {}, times = Infinity): this {
    const matches =
      typeof matcher === 'string'
        ? (request: ProcessRequest) => commandLine(request).startsWith(matcher)
        : matcher;
    this.rules.unshift({ matches, result, remaining: times });
    return this;
  }

  /** The recorded command lines, in order. */
  commandLines(): string[] {
    return this.calls.map(commandLine);
  }

  /** Records the request and answers it from the script (127 when nothing matches). */
  async run(request: ProcessRequest): Promise<ProcessResult> {
    this.calls.push(request);
    const rule = this.rules.find(
      (candidate) => candidate.remaining > 0 && candidate.matches(request),
    );
    if (!rule) {
      return {
        exitCode: 127,
        stdout: '',
        stderr: `RecordedProcessRunner: no scripted answer for: ${commandLine(request)}`,
        timedOut: false,
      };
    }
    rule.remaining -= 1;
    const partial = typeof rule.result === 'function' ? await rule.result(request) : rule.result;
    return { exitCode: 0, stdout: '', stderr: '', timedOut: false, ...partial };
  }
}
