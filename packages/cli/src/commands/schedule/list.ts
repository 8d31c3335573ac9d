import { FleetCommand } from '../../base-command.js';
import type { InstalledSchedule } from '../../schedule/io.js';

export interface ScheduleListJson {
  readonly schema: 'fleet.schedules/v1';
  readonly schedules: InstalledSchedule[];
}

export default class ScheduleList extends FleetCommand {
  static override summary = 'List the report schedules fleet installed on this seat.';
  static override description =
    'Reads the definitions fleet wrote (by its naming convention: fleet-report-* systemd user timers, org.fleet.report-* launchd agents, fleet-report-* task definitions) and prints each with its interval and command line. Reads only.';
  static override examples = [
    '<%= config.bin %> schedule list',
    '<%= config.bin %> schedule list --json',
  ];

  async run(): Promise<ScheduleListJson> {
    await this.parse(ScheduleList);
    const { listSchedules } = await import('../../schedule/io.js');
    const { operatorScheduleHost } = await import('../../schedule/host.js');
    const { escapeControl } = await import('@fleet/core');
    const schedules = await listSchedules(await operatorScheduleHost());
    if (schedules.length === 0) this.log('No fleet schedules installed.');
    for (const schedule of schedules) {
      this.log(
        `${schedule.name.padEnd(32)} every ${(schedule.every ?? '?').padEnd(6)} ${escapeControl(schedule.command.join(' '))}`,
      );
    }
    return { schema: 'fleet.schedules/v1', schedules };
  }
}
