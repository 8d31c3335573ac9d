import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { escapeControl } from '@fleet/core';
import { ConfigReadService, type ExportResponse } from '@fleet/operator/config-read';

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
    const { args, flags } = await this.parse(ConfigExport);
    const path = await this.nodePath(args.path);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(ConfigReadService);
    const exported = await service.export({
      root,
      host: args.host,
      path,
      timeoutMs: flags.timeout,
    });
    // A terminal gets control characters escaped (a file must not drive it); a pipe gets the bytes.
    if (!this.jsonEnabled()) {
      process.stdout.write(
        process.stdout.isTTY ? escapeControl(exported.content) : exported.content,
      );
    }
    return exported;
  }
}
