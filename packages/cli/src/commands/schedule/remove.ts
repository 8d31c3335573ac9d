import { Args } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { ScheduleService } from '@fleet/operator/schedule';

export interface ScheduleRemoveJson {
  readonly name: string;
  readonly removed: string[];
  readonly supervisor: string[][];
}

export default class ScheduleRemove extends FleetCommand {
  static override summary = 'Remove a report schedule fleet installed.';
  static override description =
    'Unregisters it from the supervisor (systemctl --user disable --now and daemon-reload; launchctl bootout; schtasks /Delete) and deletes its definition files. Only schedules fleet installed (as `fleet schedule list` shows them) can be removed.';
  static override examples = [
    '<%= config.bin %> schedule remove fleet-report-drift',
    '<%= config.bin %> schedule remove version --json',
  ];
  static override args = {
    name: Args.string({
      description: 'the schedule (fleet-report-<verb>, or just <verb>)',
      required: true,
    }),
  };

  async run(): Promise<ScheduleRemoveJson> {
    const { args } = await this.parse(ScheduleRemove);
    const service = await this.service(ScheduleService);
    const result = await service.remove({ name: args.name });
    this.log(`Removed ${result.name}:`);
    for (const file of result.removed) this.log(`  ${file}`);
    return { name: result.name, removed: result.removed, supervisor: result.supervisor };
  }
}
