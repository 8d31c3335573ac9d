/**
 * The controller's LaunchAgent, generated as a pure function (contract §12), and read back. Where a
 * Mac keeps fleet's files (docs/runtime-lifecycle.md, "macOS layout"):
 *
 *   ~/Library/LaunchAgents/dev.fleet.controller.plist     the agent (loaded at every login)
 *   ~/Library/Logs/fleet/controller.log                   its stdout and stderr (Console.app finds it)
 *   ~/Library/Application Support/fleet/runtime/          the generations (core's runtimeLayout)
 *   ~/Library/Application Support/fleet/jobs/             the plists of the runner's own jobs
 *
 * The keys (launchd.plist(5)): `ProgramArguments` is the runtime command as argv (no shell, no
 * quoting); `RunAtLoad` starts it at bootstrap and login; `KeepAlive` `{ SuccessfulExit: false }`
 * restarts it after a failure but leaves a controller that exited cleanly (a stop request)
 * stopped, as systemd's `Restart=on-failure`; `ThrottleInterval` 5 and `ExitTimeOut` 30 are the
 * unit's `RestartSec=5s` and `TimeoutStopSec=30s`; `ProcessType` Standard, because Background's
 * I/O throttling would stretch a staging the operator waits for; the log paths are absolute —
 * launchd expands no `~`.
 */
import {
  FleetError,
  describeRuntimeCommand,
  xmlEscape,
  type DefinitionFacts,
  type SupervisorDefinition,
  type SupervisorDefinitionInput,
} from '@fleet/core/plugin';

export const LABEL = 'dev.fleet.controller';
export const AGENTS_DIR = '~/Library/LaunchAgents';
/** `~/`-relative: where fleet's launchd jobs write (the user's log folder, as macOS expects). */
export const LOG_DIR = '~/Library/Logs/fleet';
/** `~/`-relative: the plists of the runner's and the node-id switch's own jobs. */
export const JOBS_DIR = '~/Library/Application Support/fleet/jobs';
/** The label prefix of a job of its own (`dev.fleet.job.runtime-runner`). */
export const JOB_LABEL_PREFIX = 'dev.fleet.job.';

export const plistPath = (label: string): string => `${AGENTS_DIR}/${label}.plist`;
/** The controller's log file, absolute. */
export const controllerLog = (home: string, label: string): string =>
  `${home}/Library/Logs/fleet/${label === LABEL ? 'controller' : label}.log`;

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A reverse-DNS label fleet accepts (letters, digits, `.`, `-`, `_`). */
export const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$/;

function refuse(message: string): FleetError {
  return new FleetError('USAGE', `launchd agent: ${message}`);
}

const DOCTYPE =
  '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">';
/** A control character other than tab, line feed and carriage return cannot be in XML 1.0. */
const notXml = (value: string): boolean =>
  [...value].some((ch) => {
    const code = ch.charCodeAt(0);
    return code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d;
  });

const str = (value: string): string => {
  if (notXml(value)) throw refuse(`${JSON.stringify(value)} holds a control character`);
  return `<string>${xmlEscape(value)}</string>`;
};

export interface JobKeys {
  readonly label: string;
  readonly comment: string;
  readonly argv: readonly string[];
  readonly workingDirectory: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly log: string;
  /** Lines of further keys, already XML (`<key>…</key>` and value). */
  readonly extra: readonly string[];
}

/** A job plist fleet writes (pure): the keys every fleet job has, then `extra`. */
export function jobPlist(keys: JobKeys): string {
  if (!LABEL_PATTERN.test(keys.label)) throw refuse(`${JSON.stringify(keys.label)} is not a label`);
  const [program] = keys.argv;
  if (program === undefined || !program.startsWith('/'))
    throw refuse('the command must start with an absolute path');
  if (!keys.workingDirectory.startsWith('/'))
    throw refuse('the working directory must be absolute');
  if (!keys.log.startsWith('/')) throw refuse('the log must be an absolute path');
  const environment = Object.entries(keys.environment);
  for (const [name] of environment) {
    if (!ENV_NAME.test(name))
      throw refuse(`${JSON.stringify(name)} is not an environment variable name`);
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    DOCTYPE,
    `<!-- ${xmlEscape(keys.comment).replace(/--/g, '- -')} -->`,
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  ${str(keys.label)}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...keys.argv.map((word) => `    ${str(word)}`),
    '  </array>',
    '  <key>WorkingDirectory</key>',
    `  ${str(keys.workingDirectory)}`,
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...environment.flatMap(([name, value]) => [`    <key>${name}</key>`, `    ${str(value)}`]),
    '  </dict>',
    '  <key>StandardOutPath</key>',
    `  ${str(keys.log)}`,
    '  <key>StandardErrorPath</key>',
    `  ${str(keys.log)}`,
    ...keys.extra,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

/** The controller's agent for a generation (pure). */
export function launchAgent(input: SupervisorDefinitionInput, label = LABEL): SupervisorDefinition {
  if (!NODE_ID.test(input.nodeId))
    throw refuse(`node id ${JSON.stringify(input.nodeId)} is not a node id`);
  if (!input.home.startsWith('/')) throw refuse('the home must be an absolute path');
  const content = jobPlist({
    label,
    comment: `Generated by fleet (@fleet/plugin-bootstrap-launchd): the controller of node ${input.nodeId}. fleet rewrites this file on every bootstrap or upgrade: do not edit it by hand.`,
    argv: input.command,
    workingDirectory: input.home,
    environment: { NODE_ENV: 'production', ...input.environment },
    log: controllerLog(input.home, label),
    extra: [
      '  <key>RunAtLoad</key>',
      '  <true/>',
      '  <key>KeepAlive</key>',
      '  <dict>',
      '    <key>SuccessfulExit</key>',
      '    <false/>',
      '  </dict>',
      '  <key>ThrottleInterval</key>',
      '  <integer>5</integer>',
      '  <key>ExitTimeOut</key>',
      '  <integer>30</integer>',
      '  <key>ProcessType</key>',
      '  <string>Standard</string>',
    ],
  });
  return { path: plistPath(label), content, encoding: 'utf8' };
}

/**
 * A job of its own (`launchDetached`): run once at its bootstrap (`RunAtLoad`), never restarted
 * (no `KeepAlive`), its plist outside `~/Library/LaunchAgents` so no login loads it again.
 */
export function detachedJobPlist(job: {
  readonly label: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly log: string;
}): SupervisorDefinition {
  return {
    path: `${JOBS_DIR}/${job.label}.plist`,
    content: jobPlist({
      label: job.label,
      comment: `Generated by fleet (@fleet/plugin-bootstrap-launchd): a job of its own, run once.`,
      argv: job.argv,
      workingDirectory: job.cwd,
      environment: job.env,
      log: job.log,
      extra: [
        '  <key>RunAtLoad</key>',
        '  <true/>',
        '  <key>ProcessType</key>',
        '  <string>Standard</string>',
      ],
    }),
    encoding: 'utf8',
  };
}

// ---- reading a plist back -----------------------------------------------------------------------

const unescape = (text: string): string =>
  text.replace(/&(lt|gt|amp|quot|apos|#x[0-9a-fA-F]+|#\d+);/g, (_m, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }[name] as string;
  });

/** The value element after `<key>KEY</key>` at the top level of fleet's plist shape. */
function valueOf(content: string, key: string): string | null {
  const match = new RegExp(
    `\\n  <key>${key}</key>\\n  (<(array|dict)>[\\s\\S]*?\\n  </\\2>|<[^\\n]*>)`,
  ).exec(content);
  return match?.[1] ?? null;
}
const strings = (xml: string): string[] =>
  [...xml.matchAll(/<string>([\s\S]*?)<\/string>|<string\/>/g)].map((m) => unescape(m[1] ?? ''));

/** What a fleet job plist says (pure): label, argv, generation, `--node-id`, environment. */
export function readAgent(content: string): DefinitionFacts & { readonly label: string | null } {
  const label = strings(valueOf(content, 'Label') ?? '')[0] ?? null;
  const command = strings(valueOf(content, 'ProgramArguments') ?? '');
  const environment: Record<string, string> = {};
  const dict = valueOf(content, 'EnvironmentVariables') ?? '';
  for (const m of dict.matchAll(/<key>([^<]*)<\/key>\s*<string>([\s\S]*?)<\/string>/g)) {
    environment[unescape(m[1] as string)] = unescape(m[2] as string);
  }
  const facts = describeRuntimeCommand(command);
  return { label, command, generation: facts.buildId, nodeIdFlag: facts.nodeId, environment };
}
