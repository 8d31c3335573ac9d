import { Args, Flags } from '@fleet/core/command';
import type { AdoptResult } from '@fleet/operator/config-adopt';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { ConfigAdoptService, adoptedLine, renderAdoptPreview } from '@fleet/operator/config-adopt';

export type { AdoptResult };

export default class ConfigAdopt extends FleetCommand {
  static override summary =
    "Bring a host's live file into the repository (a commit with provenance).";
  static override description = `Captures the live file (redacted on the node: secret values back to {{ secret.NAME }}), replaces the host's variable values with their {{ host.NAME }} placeholders, refuses it if anything still looks like a credential (exit 7, naming line numbers, never values, unless --allow-secret-line), writes it to mirror/<host>/<domain>/<file> and commits it with the trailers Fleet-Adopted-From, Fleet-Live-Sha256, Fleet-Operation and Fleet-Controller.

Content only: a files entry's mode (contract §10.4) is never adopted — it stays what files.yaml says, and a file differing only by its mode has nothing to adopt (change the entry's mode, or let install set it back).

--promote also writes it over the canonical file in domains/ (for a block file, as the canonical's section), in the same commit (trailer Fleet-Promoted-To), so the host is current afterwards. It is refused (exit 7, PROMOTE_REFUSED) when the promoted canonical would not render back to the live file, and when another host would then render differently from its live file — every host whose view changes is read — unless you name those hosts with --accept-drift-on (trailer Fleet-Accepted-Drift); install them next.

--dry-run shows the commit it would make — files, diffs, message with trailers — and writes nothing to the repository.

Reads fleet.yaml, hosts/ and domains/ as committed at HEAD. Refuses (exit 3) when a path it writes has uncommitted changes.`;
  static override examples = [
    "<%= config.bin %> config adopt node-01 '~/.claude/CLAUDE.md'",
    '<%= config.bin %> config adopt node-01 \'~/.config/router/router.yaml\' --message "router: keep the hot fix" --allow-secret-line 12',
    "<%= config.bin %> config adopt node-01 '~/.claude/CLAUDE.md' --promote --dry-run",
    "<%= config.bin %> config adopt node-01 '~/.claude/CLAUDE.md' --promote --accept-drift-on node-02",
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    path: Args.string({
      description: "the live file, ~/-relative (quote it: '~/…')",
      required: true,
    }),
  };
  static override flags = {
    message: Flags.string({ char: 'm', description: 'commit message (default: adopt HOST:PATH)' }),
    'allow-secret-line': Flags.integer({
      description: 'accept a secret-scan finding on this line (repeatable)',
      multiple: true,
      min: 1,
    }),
    promote: Flags.boolean({
      description: 'also make it the canonical file in domains/ (the host is then current)',
      default: false,
    }),
    'accept-drift-on': Flags.string({
      description: 'with --promote: a host that may drift from it (repeatable)',
      multiple: true,
      dependsOn: ['promote'],
    }),
    'dry-run': Flags.boolean({
      description: 'show the commit it would make; write nothing',
      default: false,
    }),
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 10_000, min: 1 }),
  };

  async run(): Promise<AdoptResult> {
    const { args: given, flags } = await this.parse(ConfigAdopt);
    const path = await this.nodePath(given.path);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(ConfigAdoptService);
    const { result, modeNote } = await service.run({
      root,
      host: given.host,
      path,
      ...(flags.message === undefined ? {} : { message: flags.message }),
      allowSecretLines: flags['allow-secret-line'] ?? [],
      promote: flags.promote,
      acceptDriftOn: flags['accept-drift-on'] ?? [],
      dryRun: flags['dry-run'],
      timeoutMs: flags.timeout,
    });
    if (result.dryRun) {
      if (!this.jsonEnabled()) this.log(renderAdoptPreview(result.dryRun, core.escapeControl));
      return result;
    }
    this.log(adoptedLine(result));
    if (modeNote !== null) this.note(modeNote);
    return result;
  }
}
