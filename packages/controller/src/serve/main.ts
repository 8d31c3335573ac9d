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
import { readFile } from 'node:fs/promises';
import { createController } from '../controller.js';
import { readLegacyTokenHash } from '../tokens/auth.js';
import { parseEntryArgs, requireKind, usage } from './flags.js';
import { loadServeRegistry, type ServeMainOptions } from './registry.js';
import { reportFailure } from './report.js';

export type { ServeMainOptions } from './registry.js';

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

/** Parses and checks the flags of `controller serve` (pure but for the existence checks). */
export async function parseServeFlags(argv: readonly string[]): Promise<ServeFlags> {
  const { text, flag } = parseEntryArgs(argv, {
    strings: [
      'home',
      'node-id',
      'bind',
      'port',
      'tls-cert',
      'tls-key',
      'legacy-token-file',
      'allowed-host',
    ],
    booleans: ['json'],
    required: ['home', 'node-id'],
  });
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
    json: flag('json'),
  };
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
    reportFailure(error, json);
  }
}
