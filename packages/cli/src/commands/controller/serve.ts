import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { readFile } from 'node:fs/promises';
import { createController, readLegacyTokenHash } from '@fleet/controller';

export interface ServeStarted {
  readonly url: string;
  readonly nodeId: string;
  readonly home: string;
  readonly pid: number;
}

export default class ControllerServe extends FleetCommand {
  static override summary = "Run this node's controller (the node agent) until SIGTERM or SIGINT.";
  static override description = `Serves the typed HTTP/JSON API of contract §5, on --bind:--port, for the domains the node's own policy lists (<home>/.config/fleet/node-policy.yaml: what it serves, runs and writes; docs/node-policy.md). Without a valid policy it does not start (exit 2, naming the file, line and field, or the fix: \`fleet node-policy init --home DIR\`); a changed policy is read again at the next request. Node state (tokens, audit log, journals, backups) lives under <home>/.local/state/fleet/. Issue tokens with \`fleet token issue --home DIR\`.

Prints the bound URL as one line on stdout once it accepts requests (with --json: one JSON line { url, nodeId, home, pid }). --port 0 binds an ephemeral port.

Beyond loopback (--bind 0.0.0.0, or an address of this machine) the bearer tokens must not cross the network in clear: --tls-cert and --tls-key are required, and a plain-HTTP bind is refused. The Host header must then name this machine — one of its addresses or its host name, with the port — or a name given with --allowed-host (DNS rebinding).

Audit log: <home>/.local/state/fleet/audit.jsonl and the segments it rotates into; it fails closed (an operation whose record cannot be written is not done) and a broken chain makes the node refuse writes until \`fleet audit verify --home DIR --repair\` (see the controller README).

Failpoints for crash tests: FLEET_FAILPOINT=<point>:kill|throw|sleep(<ms>) (see the controller README).`;
  static override examples = [
    '<%= config.bin %> controller serve --home ~ --node-id node-01',
    '<%= config.bin %> controller serve --home /srv/node --node-id node-02 --port 0 --json',
    '<%= config.bin %> controller serve --home ~ --node-id node-01 --bind 0.0.0.0 --tls-cert cert.pem --tls-key key.pem',
    '<%= config.bin %> controller serve --home ~ --node-id node-01 --bind 0.0.0.0 --tls-cert cert.pem --tls-key key.pem --allowed-host node-01.lan:7701',
  ];
  static override flags = {
    home: Flags.directory({
      description: "the node's home (~): managed paths and node state are under it",
      required: true,
      exists: true,
    }),
    'node-id': Flags.string({
      description: "this node's id (as in the repo's hosts/<host>.yaml node_id)",
      required: true,
    }),
    bind: Flags.string({ description: 'address to listen on', default: '127.0.0.1' }),
    port: Flags.integer({
      description: 'port to listen on (0: an ephemeral port)',
      default: 7701,
      min: 0,
      max: 65535,
    }),
    'tls-cert': Flags.file({
      description: 'PEM certificate: serve https',
      exists: true,
      dependsOn: ['tls-key'],
    }),
    'tls-key': Flags.file({
      description: 'PEM private key for --tls-cert',
      exists: true,
      dependsOn: ['tls-cert'],
    }),
    'allowed-host': Flags.string({
      description:
        'beyond loopback: extra Host values clients may use, comma-separated NAME:PORT (this machine’s addresses and host name are always accepted)',
    }),
    'legacy-token-file': Flags.file({
      description:
        "file holding the legacy shared token's sha256 (64 hex digits): accepted for read operations only",
      exists: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ControllerServe);
    const registry = await this.loadRegistry();
    const tls =
      flags['tls-cert'] && flags['tls-key']
        ? { cert: await readFile(flags['tls-cert']), key: await readFile(flags['tls-key']) }
        : undefined;
    const legacy = flags['legacy-token-file']
      ? (await readLegacyTokenHash(flags['legacy-token-file'])).toString('hex')
      : undefined;
    const controller = await createController({
      home: flags.home,
      nodeId: flags['node-id'],
      registry,
      bind: flags.bind,
      port: flags.port,
      ...(tls ? { tls } : {}),
      ...(legacy ? { legacyTokenSha256: legacy } : {}),
      ...(flags['allowed-host']
        ? {
            allowedHosts: flags['allowed-host']
              .split(',')
              .map((host) => host.trim())
              .filter((host) => host !== ''),
          }
        : {}),
    });
    const started: ServeStarted = {
      url: controller.url,
      nodeId: flags['node-id'],
      home: controller.runtime.home,
      pid: process.pid,
    };
    // One line, as soon as requests are accepted: scripts and the lab read it.
    process.stdout.write(
      this.jsonEnabled() ? `${JSON.stringify(started)}\n` : `${controller.url}\n`,
    );
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    this.note(`${signal}: closing the controller`);
    await controller.close();
  }
}
