import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { HostAddService } from '@fleet/operator/host-add';

export default class HostAdd extends FleetCommand {
  static override summary = 'Enroll a machine as a host of the fleet over SSH, in one command.';
  static override description = `Needs only sshd and a user account on the machine (Linux with systemd --user and lingering, tar; Node.js ≥ 20.19 on the user's PATH unless the release ships one for its platform: fleet release --node linux-x64), and a signed runtime artifact pinned in fleet.yaml (canonicalVersion, by fleet release). Without --confirm it logs in, looks, and prints the plan: the SSH host key's fingerprint to compare, what it will install where, the node policy it will write, the token it will issue. With --confirm (the host key pinned with --host-key or in fleet.yaml: never trusted on first use) it copies the artifact unless the host holds it, installs it as the first generation under systemd --user, makes the controller's TLS key and certificate on the host (the key never leaves it), writes the node policy (the host's domains; for files exactly the paths files.yaml declares), issues your token into your credentials file, installs the recovery key's forced command, verifies the controller from here over TLS at the declared address, and only then commits fleet.yaml and hosts/NAME.yaml. Running it again on an enrolled host changes nothing and says so; an interrupted run can be run again. docs/getting-started.md walks through it.

Exit 0 when enrolled (or already), 2 for bad flags or no pinned artifact, 3 when the host cannot be enrolled yet (the output says what to run there), 5 when it cannot be reached, 6 when the new controller was not accepted (its runner's last lines are shown), 7 for a host key that is not pinned or does not match.`;
  static override examples = [
    '<%= config.bin %> host add alpha --ssh me@10.0.0.2',
    '<%= config.bin %> host add alpha --ssh me@10.0.0.2 --host-key SHA256:abc… --confirm',
    '<%= config.bin %> host add beta --ssh me@beta.lan:2222 --address beta.lan --port 7701 --domain files --domain router --confirm',
    '<%= config.bin %> host add alpha --confirm   # again: its node policy brought in line with fleet.yaml and files.yaml',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    name: Args.string({ description: 'the host name in fleet.yaml', required: true }),
  };
  static override flags = {
    ssh: Flags.string({
      description:
        "USER@HOST[:PORT] to log in with (default for an enrolled host: fleet.yaml's ssh)",
    }),
    address: Flags.string({
      description:
        'the address the controller listens on and fleet reaches it at (default: the SSH host)',
    }),
    port: Flags.integer({
      description: "the controller's port (default 7701)",
      min: 1,
      max: 65535,
    }),
    'host-key': Flags.string({
      description: "the host's SSH key to pin: its public key line or SHA256: fingerprint",
    }),
    domain: Flags.string({
      description: 'a domain the host serves (repeat; default: files)',
      multiple: true,
    }),
    identity: Flags.file({
      description: 'your SSH private key (default: the agent, then ~/.ssh/id_*)',
    }),
    node: Flags.string({
      description:
        "which Node.js runs fleet there: the host's own, the one the release ships (fleet release --node), or auto: the host's when it is at least 20.19, else the release's",
      options: ['auto', 'host', 'release'],
      default: 'auto',
    }),
    'acceptance-timeout': Flags.integer({
      description: 'seconds the new controller has to come up and be accepted',
      default: 60,
      min: 5,
      max: 600,
    }),
    confirm: Flags.boolean({ description: 'really enroll the host', default: false }),
  };

  async run(): Promise<Record<string, unknown>> {
    const { args, flags } = await this.parse(HostAdd);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(HostAddService);
    const result = await service.run({
      root,
      name: args.name,
      ...(flags.ssh === undefined ? {} : { ssh: flags.ssh }),
      ...(flags.address === undefined ? {} : { address: flags.address }),
      ...(flags.port === undefined ? {} : { port: flags.port }),
      ...(flags['host-key'] === undefined ? {} : { hostKey: flags['host-key'] }),
      ...(flags.domain === undefined ? {} : { domains: flags.domain }),
      ...(flags.identity === undefined ? {} : { identity: flags.identity }),
      node: flags.node as 'auto' | 'host' | 'release',
      acceptanceTimeoutMs: flags['acceptance-timeout'] * 1000,
      confirm: flags.confirm,
      progress: (line) => this.note(line),
    });
    if (result.outcome === 'planned') {
      process.stdout.write(result.text);
      if (result.problems.length > 0) process.exitCode = 3;
    } else if (result.outcome === 'unchanged') {
      this.log(
        `${result.host} is enrolled already (${result.controller}, runtime ${result.runtime.version}): nothing changed.`,
      );
    } else {
      this.log(
        `${result.host} ${result.outcome === 'enrolled' ? 'enrolled' : 'was enrolled; fleet.yaml now records it'}: ${result.controller} (TLS ${result.fingerprint}), runtime ${result.runtime.version}; ${result.bytesSent > 0 ? `${result.bytesSent} bytes sent` : 'no artifact sent'}; commit ${result.commit?.slice(0, 12)}.`,
      );
    }
    const { text, ...json } = result;
    void text;
    return json;
  }
}
