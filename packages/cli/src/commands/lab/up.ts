import { Flags } from '@fleet/core/command';
import type { LabDocument } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import * as path from 'node:path';
import { labUp, linkedDevPlugins } from '@fleet/lab';

/** A value as a POSIX shell word: bare when safe, else single-quoted. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * What `fleet lab up` prints on stdout: a comment saying what the lines are for, then the exports
 * (evaluated by `eval "$(fleet lab up)"`, read by a person otherwise).
 */
export function exportLines(document: Pick<LabDocument, 'repo' | 'credentials'>): string[] {
  return [
    `# This lab's repository and credentials for your shell: run these lines (eval "$(fleet lab up …)" does)`,
    `export FLEET_REPO=${shellWord(document.repo)}`,
    `export FLEET_CREDENTIALS=${shellWord(document.credentials)}`,
  ];
}

export default class LabUp extends FleetCommand {
  static override summary =
    'Start a local lab fleet on 127.0.0.1: a repo, N controllers and their tokens.';
  static override description = `Builds, in DIR: lab.json (the same document --json prints), repo/ (a fleet repository declaring every host with its controller URL, with a few commits of history), credentials.json (one token per host, mode 0600) and nodes/<host>/home/ (each node's home). Each controller runs under a small lab supervisor that can restart it with new flags, on the same port.

Hosts are named node-01, node-02, … and run every registered config domain, those of the plugins linked into this CLI (fleet plugins link) included: the lab's nodes load a linked plugin straight from its folder (lab only; fleet lab restart picks up a rebuild). --virtual runs all the nodes' controllers in one process (for scale runs of hundreds of nodes). --supervisor systemd-user runs each controller as a real unit of the calling user's running systemd --user manager instead (fleet-lab-<tag>-<host>.service, installed through the bootstrap-systemd adapter and linked from the node's home; the user must linger). A DIR holding a stopped lab is brought up again as it was (with the supervisor it had); a DIR holding a running lab is refused.

Prints, on stdout, the export lines to use it after a comment saying so (eval "$(fleet lab up)" runs them); progress goes to stderr.`;
  static override examples = [
    '<%= config.bin %> lab up',
    'eval "$(<%= config.bin %> lab up --hosts 2 --dir /tmp/lab)"',
    '<%= config.bin %> lab up --virtual --hosts 1000 --dir /tmp/big-lab --json',
    '<%= config.bin %> lab up --supervisor systemd-user --hosts 2 --dir ~/lab',
  ];
  static override flags = {
    hosts: Flags.integer({
      description: 'number of hosts (default 3; a stopped lab keeps its own)',
      min: 1,
    }),
    dir: Flags.directory({ description: 'the lab directory', default: '.fleet-lab' }),
    virtual: Flags.boolean({
      description: "run every node's controller in one process",
      default: false,
    }),
    'dev-plugins': Flags.boolean({
      description:
        'serve the plugins linked into this CLI from their folders (lab only; --no-dev-plugins: only what the runtime carries, as a real node)',
      default: true,
      allowNo: true,
    }),
    'node-actions': Flags.file({
      description:
        "a new lab's coupled actions: per domain, the node policy actions its nodes define and the roles fleet.yaml names (YAML: DOMAIN: { actions: { ID: { argv: [...] } }, validate: ID })",
      exists: true,
    }),
    supervisor: Flags.string({
      description:
        "what runs each controller: the lab's own supervisor, or a unit of your systemd --user manager (default: lab; a stopped lab keeps its own)",
      options: ['lab', 'systemd-user'],
    }),
  };

  async run(): Promise<LabDocument> {
    const { flags } = await this.parse(LabUp);
    const registry = await this.loadRegistry();
    // `fleet plugins link`ed plugins: the lab's nodes serve them from their folders (dev loop).
    const linked = [...this.config.plugins.values()].map(({ name, root, type }) => ({
      name,
      root,
      type,
    }));
    const started = Date.now();
    const document = await labUp({
      dir: flags.dir,
      hosts: flags.hosts,
      virtual: flags.virtual,
      supervisor: flags.supervisor as 'lab' | 'systemd-user' | undefined,
      fleetBin: path.join(this.config.root, 'bin', 'run.js'),
      registry,
      devPlugins: flags['dev-plugins'] ? linkedDevPlugins(linked, registry) : [],
      nodeActionsFile: flags['node-actions'],
      progress: (line) => this.note(line),
    });
    if (!this.jsonEnabled()) {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      this.note(
        `Lab up in ${seconds} s: ${document.hosts.length} host${document.hosts.length === 1 ? '' : 's'}${flags.virtual ? ' (virtual, one process)' : ''}`,
      );
      const shown =
        document.hosts.length > 10
          ? [...document.hosts.slice(0, 5), undefined, ...document.hosts.slice(-2)]
          : document.hosts;
      for (const host of shown) {
        this.note(host ? `  ${host.name}  ${host.controller}  pid ${host.pid}` : '  …');
      }
      // The note and its exports together on stdout (a shell comment, so `eval` takes the lines
      // as they are): under `eval "$(fleet lab up)"` stderr shows no note introducing nothing.
      this.log(exportLines(document).join('\n'));
    }
    return document;
  }
}
