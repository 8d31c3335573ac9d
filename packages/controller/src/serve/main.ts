/**
 * `fleet controller serve` without oclif or the CLI (contract §14, "means": the controller process
 * loads neither): the CLI's `bin/run.js` hands `controller serve …` here before it imports oclif,
 * so every supervisor definition that runs `<node> …/bin/run.js controller serve …` (systemd unit,
 * scheduled task, lab supervisor, a runtime generation's `package/bin/run.js`) gets this entry
 * with the same flags, output and exit codes as the oclif command it replaces
 * (`packages/cli/src/commands/controller/serve.ts`, which still serves `--help`).
 *
 * Flags are those of the command; errors follow the CLI's contract (contract §7): a usage error is
 * exit 2 with one line and `hint: see --help`, a fleet error keeps its code and exit code, `--json`
 * puts the error envelope on stdout.
 */
import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  ExitCode,
  FleetError,
  Registry,
  assembleRegistrations,
  errorEnvelope,
  formatProblem,
  isFleetError,
  FLEET_PLUGIN_API_VERSION,
  type FleetErrorLike,
} from '@fleet/core/node';
import { createController } from '../controller.js';
import { readLegacyTokenHash } from '../tokens/auth.js';
import { labDevPlugins } from './dev-plugins.js';
import { discoverPlugins, runRegisterHooks } from './plugins.js';

export interface ServeFlags {
  readonly home: string;
  readonly nodeId: string;
  readonly bind: string;
  readonly port: number;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly legacyTokenFile?: string;
  /** `--allowed-host`: extra Host values beyond loopback (NAME:PORT, comma-separated). */
  readonly allowedHosts?: readonly string[];
  readonly json: boolean;
}

export interface ServeMainOptions {
  /** The CLI package's directory: its package.json names the bundled plugins. */
  readonly cliRoot: string;
  /** The node's home: a lab node's policy there may name dev plugins (dev-plugins.ts). */
  readonly home?: string;
}

const usage = (message: string) =>
  new FleetError('USAGE', message, { suggestions: ['see --help'] });

async function requireKind(flag: string, path: string, kind: 'file' | 'directory'): Promise<void> {
  let ok = false;
  try {
    const found = await stat(path);
    ok = kind === 'file' ? found.isFile() : found.isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw usage(`--${flag}: no ${kind} found at ${path}`);
}

/** Parses and checks the flags of `controller serve` (pure but for the existence checks). */
export async function parseServeFlags(argv: readonly string[]): Promise<ServeFlags> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        home: { type: 'string' },
        'node-id': { type: 'string' },
        bind: { type: 'string' },
        port: { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'legacy-token-file': { type: 'string' },
        'allowed-host': { type: 'string' },
        json: { type: 'boolean' },
      },
    }));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const option = /'(-[^']*)'/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw usage(`Nonexistent flag: ${option}`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw usage(`Unexpected argument: ${/'([^']*)'/.exec(message)?.[1] ?? ''}`);
    }
    throw usage(`Flag ${option.split(' ')[0] ?? ''} expects a value`);
  }
  const text = (name: string) => values[name] as string | undefined;
  const missing = ['home', 'node-id'].filter((name) => text(name) === undefined);
  if (missing.length > 0) {
    throw usage(
      `Missing required flag${missing.length > 1 ? 's' : ''} ${missing.map((m) => `--${m}`).join(', ')}`,
    );
  }
  const portText = text('port') ?? '7701';
  const port = /^\d+$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw usage(`--port must be an integer from 0 to 65535, not ${JSON.stringify(portText)}`);
  }
  const cert = text('tls-cert');
  const key = text('tls-key');
  if ((cert === undefined) !== (key === undefined)) {
    throw usage(cert === undefined ? '--tls-key needs --tls-cert' : '--tls-cert needs --tls-key');
  }
  const home = text('home') as string;
  await requireKind('home', home, 'directory');
  if (cert !== undefined) await requireKind('tls-cert', cert, 'file');
  if (key !== undefined) await requireKind('tls-key', key, 'file');
  const legacy = text('legacy-token-file');
  if (legacy !== undefined) await requireKind('legacy-token-file', legacy, 'file');
  const allowedHosts = text('allowed-host')
    ?.split(',')
    .map((host) => host.trim())
    .filter((host) => host !== '');
  return {
    home,
    nodeId: text('node-id') as string,
    bind: text('bind') ?? '127.0.0.1',
    port,
    ...(cert !== undefined && key !== undefined ? { tlsCert: cert, tlsKey: key } : {}),
    ...(legacy !== undefined ? { legacyTokenFile: legacy } : {}),
    ...(allowedHosts !== undefined && allowedHosts.length > 0 ? { allowedHosts } : {}),
    json: values['json'] === true,
  };
}

/** The registry of the CLI's bundled and carried plugins, refusals reported on stderr. */
export async function loadServeRegistry(options: ServeMainOptions): Promise<Registry> {
  const warn = (line: string) => process.stderr.write(`${line}\n`);
  const dev = options.home === undefined ? { plugins: [] } : await labDevPlugins(options.home);
  if (dev.refused !== undefined) warn(dev.refused);
  const plugins = await discoverPlugins({
    cliRoot: options.cliRoot,
    warn,
    devPlugins: dev.plugins,
  });
  const outcomes = await runRegisterHooks(plugins);
  const { accepted, problems } = assembleRegistrations(outcomes, FLEET_PLUGIN_API_VERSION);
  for (const problem of problems) warn(`warning: ${problem.message}`);
  return new Registry(accepted, problems);
}

function asFailure(error: unknown): FleetErrorLike {
  if (isFleetError(error)) return error;
  return {
    code: 'INTERNAL',
    message: error instanceof Error ? error.message : String(error),
    exitCode: ExitCode.internal,
  };
}

/** Reports a failure as the CLI's base command does; sets the exit code. */
function report(error: unknown, json: boolean): void {
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

/**
 * Runs `controller serve` with `argv` (the arguments after `controller serve`) until SIGTERM or
 * SIGINT. Resolves when the controller has closed; the exit code is in `process.exitCode`.
 */
export async function runControllerServe(
  argv: readonly string[],
  options: ServeMainOptions,
): Promise<void> {
  const json = argv
    .slice(0, argv.indexOf('--') === -1 ? undefined : argv.indexOf('--'))
    .includes('--json');
  try {
    const flags = await parseServeFlags(argv);
    const registry = await loadServeRegistry({ ...options, home: flags.home });
    const tls =
      flags.tlsCert !== undefined && flags.tlsKey !== undefined
        ? { cert: await readFile(flags.tlsCert), key: await readFile(flags.tlsKey) }
        : undefined;
    const legacy =
      flags.legacyTokenFile !== undefined
        ? (await readLegacyTokenHash(flags.legacyTokenFile)).toString('hex')
        : undefined;
    const controller = await createController({
      home: flags.home,
      nodeId: flags.nodeId,
      registry,
      bind: flags.bind,
      port: flags.port,
      ...(tls ? { tls } : {}),
      ...(legacy ? { legacyTokenSha256: legacy } : {}),
      ...(flags.allowedHosts ? { allowedHosts: flags.allowedHosts } : {}),
    });
    const started = {
      url: controller.url,
      nodeId: flags.nodeId,
      home: controller.runtime.home,
      pid: process.pid,
    };
    // One line, as soon as requests are accepted: scripts and the lab read it.
    process.stdout.write(flags.json ? `${JSON.stringify(started)}\n` : `${controller.url}\n`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    process.stderr.write(`${signal}: closing the controller\n`);
    await controller.close();
  } catch (error) {
    report(error, json);
  }
}
