import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import * as core from '@fleet/core';
import { ConfigReadService, type InventoryResponse } from '@fleet/operator/config-read';

export default class ConfigInventory extends FleetCommand {
  static override summary =
    "List a host's managed files and their backups: size, mtime, sha256, format.";
  static override examples = [
    '<%= config.bin %> config inventory node-01',
    '<%= config.bin %> config inventory node-01 --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
  };
  static override flags = {
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 10_000, min: 1 }),
  };

  async run(): Promise<InventoryResponse> {
    const { args, flags } = await this.parse(ConfigInventory);
    const root = await this.findRepo(flags.repo);
    const service = await this.service(ConfigReadService);
    const inventory = await service.inventory({ root, host: args.host, timeoutMs: flags.timeout });
    if (!this.jsonEnabled()) {
      const esc = core.escapeControl;
      for (const file of inventory.files) {
        const state = file.error
          ? `${file.error.code}`
          : file.exists
            ? `${file.size ?? 0} B`
            : 'absent';
        this.log(
          `${file.domain.padEnd(20)} ${esc(file.path).padEnd(48)} ${file.format.padEnd(8)} ${state.padEnd(10)} ${file.mtime ?? ''} ${file.sha256?.slice(0, 12) ?? ''}`,
        );
      }
      for (const backup of inventory.backups) {
        this.log(
          `${backup.domain.padEnd(20)} ${esc(backup.path)}  backup of ${esc(backup.of)}  ${backup.size} B ${backup.mtime} ${backup.sha256.slice(0, 12)}`,
        );
      }
      if (inventory.truncated) this.note('the backup listing was cut at its bound');
    }
    return inventory;
  }
}
