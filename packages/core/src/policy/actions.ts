/**
 * Running the node policy's coupled actions (contract §5.1): the core `ActionRunner` the
 * controller hands an install, and `@fleet/testkit`'s fake hosts hand a plugin test — the same
 * code, so a fake is exactly as strict as a node. An action runs as the policy spells it: its
 * argv (an absolute program, no shell, no PATH lookup), its timeout, the runner's minimal
 * environment with nothing added; what it prints stays on the node unless the policy entry says
 * `output: return`, and then it is redacted and cut to the entry's bound.
 */
import { FleetError } from '../errors.js';
import type {
  ActionRun,
  ActionRunner,
  ProcessRunner,
  SecretValues,
} from '../interfaces/node-context.js';
import { escapeControl } from '../report/escape-control.js';
import { redactSecrets } from '../secrets/env-chain.js';
import { DEFAULT_ACTION_OUTPUT_BYTES, type PolicyAction } from './schema.js';

/** An action's output as it may travel back: redacted, control characters escaped, cut. */
export function actionOutput(
  stdout: string,
  stderr: string,
  secrets: SecretValues,
  limit: number,
): string {
  const text = escapeControl(redactSecrets(`${stdout}${stderr}`.trim(), secrets));
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  // Cut on a character boundary: the decoder drops a trailing partial character.
  return `${new TextDecoder('utf-8').decode(bytes.subarray(0, limit)).replace(/\uFFFD$/, '')}…`;
}

/** How many of an action's last output lines an operator is shown under its error. */
export const TOOL_OUTPUT_LINES = 20;
/** The most bytes of them (UTF-8), the cut mark included. */
export const TOOL_OUTPUT_BYTES = 2048;

/**
 * The tail of an action's returned output that the operator sees under a refusal (pure): its last
 * {@link TOOL_OUTPUT_LINES} lines, fewer while they exceed {@link TOOL_OUTPUT_BYTES} — whole lines,
 * so a line keeps every value it holds whole for the controller's last redaction pass (which also
 * knows rotated values). Only a last line longer than the bound alone is cut, to its end, marked
 * with a leading `…`. `undefined` for no output: a policy that keeps an action's output on the
 * node (`output: discard`) gives none, so none is shown. `output` is an {@link actionOutput},
 * already redacted in full before any cut.
 */
export function outputTail(output: string | undefined): string | undefined {
  if (output === undefined || output.trim() === '') return undefined;
  const lines = output.replace(/\n+$/, '').split('\n').slice(-TOOL_OUTPUT_LINES);
  const size = (text: string) => Buffer.byteLength(text, 'utf8');
  let bytes = size(lines.join('\n'));
  while (lines.length > 1 && bytes > TOOL_OUTPUT_BYTES) bytes -= size(`${lines.shift() ?? ''}\n`);
  const tail = lines.join('\n');
  if (bytes <= TOOL_OUTPUT_BYTES) return tail;
  const mark = '…';
  const end = Buffer.from(tail, 'utf8').subarray(bytes - (TOOL_OUTPUT_BYTES - size(mark)));
  // Cut on a character boundary: the decoder turns a leading partial character into U+FFFD.
  return `${mark}${new TextDecoder('utf-8').decode(end).replace(/^\uFFFD+/, '')}`;
}

export interface PolicyActionsOptions {
  /** The domain's actions in the node policy, by id. */
  readonly actions: Readonly<Record<string, PolicyAction>>;
  readonly domain: string;
  /**
   * The node's home, absolute: an argument `~` or `~/…` (the program too) is expanded to it, as
   * a login shell would — the policy is written on the node, for the node. Absent: `~` stays as
   * it is (a program `~/…` is then refused).
   */
  readonly home?: string;
  /** Every run is appended here, in order: the install's audit record names them. */
  readonly runs: ActionRun[];
}

/** The placeholder a validate action's argv names the staged file with (docs/node-policy.md). */
export const ACTION_FILE_PLACEHOLDER = '{file}';

/**
 * The argv an action runs with (pure): `~` and a leading `~/` expanded to the node's home, and
 * `{file}` replaced by the staged file a validate action checks. An argv naming `{file}` runs only
 * with a file, and a file is given only to an argv that names it: a validate action that could not
 * see the new content would pass it unread (`POLICY_REFUSED`, before anything is replaced).
 */
export function actionArgv(
  id: string,
  argv: readonly string[],
  options: { readonly home?: string; readonly file?: string },
): string[] {
  const named = argv.some((arg) => arg.includes(ACTION_FILE_PLACEHOLDER));
  if (options.file !== undefined && !named) {
    throw new FleetError(
      'POLICY_REFUSED',
      `the node policy's action ${id} checks a staged file, but its argv names no ${ACTION_FILE_PLACEHOLDER} (docs/node-policy.md); nothing replaced`,
    );
  }
  if (options.file === undefined && named) {
    throw new FleetError(
      'POLICY_REFUSED',
      `the node policy's action ${id} names ${ACTION_FILE_PLACEHOLDER}, which only a validate action is given (docs/node-policy.md)`,
    );
  }
  const { home, file } = options;
  return argv.map((arg) => {
    let out = arg;
    if (home !== undefined && (out === '~' || out.startsWith('~/'))) out = home + out.slice(1);
    return file === undefined ? out : out.split(ACTION_FILE_PLACEHOLDER).join(file);
  });
}

/**
 * The node policy's actions of one domain (core `ActionRunner`): the argv as the policy spells it
 * (`~` and a validate action's `{file}` expanded, {@link actionArgv}), no shell, the minimal
 * environment (nothing added), the policy's timeout, and the output kept on the node unless the
 * policy says `output: return`.
 */
export function policyActionRunner(
  processes: ProcessRunner,
  secrets: () => Promise<SecretValues>,
  options: PolicyActionsOptions,
): ActionRunner {
  return {
    has: (id) => Object.hasOwn(options.actions, id),
    async run(id, runOptions) {
      if (!Object.hasOwn(options.actions, id)) {
        throw new FleetError(
          'POLICY_REFUSED',
          `the node policy defines no action ${JSON.stringify(id)} for domain ${options.domain}`,
        );
      }
      const action = options.actions[id] as PolicyAction;
      const argv = actionArgv(id, action.argv, {
        ...(options.home === undefined ? {} : { home: options.home }),
        ...(runOptions?.file === undefined ? {} : { file: runOptions.file }),
      });
      const [command, ...args] = argv as [string, ...string[]];
      const result = await processes.run({
        command,
        args,
        timeoutMs: action.timeoutSeconds * 1000,
      });
      const run: ActionRun = {
        id,
        argv,
        exitCode: result.exitCode === -1 || result.timedOut ? null : result.exitCode,
        timedOut: result.timedOut,
        ...(action.output === 'return'
          ? {
              output: actionOutput(
                result.stdout,
                result.stderr,
                await secrets(),
                action.outputBytes ?? DEFAULT_ACTION_OUTPUT_BYTES,
              ),
            }
          : {}),
      };
      options.runs.push(run);
      return run;
    },
  };
}
