import { Args, Flags } from '@fleet/core/command';
import type { ExportResponse } from '@fleet/core';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { loadFleetContext } from '@fleet/operator/config/context.js';

export default class ConfigExport extends FleetCommand {
  static override summary = 'Print one managed file (or one of its backups) from a host, redacted.';
  static override description =
    'Secret values are replaced by their {{ secret.NAME }} placeholders on the node, before anything leaves it. Binary, non-UTF-8 and oversized files are refused, not guessed (exit 7).';
  static override examples = [
    "<%= config.bin %> config export node-01 '~/.config/router/router.yaml'",
    "<%= config.bin %> config export node-01 '~/.claude/CLAUDE.md' --json",
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override repoLine = 'stderr' as const; // stdout carries the file's bytes
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    path: Args.string({
      description: "the file, ~/-relative (quote it: '~/…')",
      required: true,
    }),
  };
  static override flags = {
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 10_000, min: 1 }),
  };

  async run(): Promise<ExportResponse> {
    const { args: given, flags } = await this.parse(ConfigExport);
    const args = { ...given, path: await this.nodePath(given.path) };
    const root = await this.findRepo(flags.repo);
    const registry = await this.loadRegistry();
    const context = await loadFleetContext({ root, registry, timeoutMs: flags.timeout });
    core.hostEntry(context.repo, args.host);
    const exported = await context.client(args.host).export({ path: args.path });
    if (!exported.exists) {
      throw new core.FleetError('FILE_NOT_FOUND', `${args.path} does not exist on ${args.host}`);
    }
    // A terminal gets control characters escaped (a file must not drive it); a pipe gets the bytes.
    if (!this.jsonEnabled()) {
      process.stdout.write(
        process.stdout.isTTY ? core.escapeControl(exported.content) : exported.content,
      );
    }
    return exported;
  }
}
