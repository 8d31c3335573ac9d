import { FleetCommand } from '../../base-command.js';
import { escapeControl } from '@fleet/core';
import {
  describeLastRun,
  jobOf,
  ScheduleService,
  type InstalledSchedule,
} from '@fleet/operator/schedule';

export interface ScheduleListJson {
  readonly schema: 'fleet.schedules/v1';
  readonly schedules: InstalledSchedule[];
}

export default class ScheduleList extends FleetCommand {
  static override summary = 'List the report schedules fleet installed on this seat.';
  static override description =
    'Reads the definitions fleet wrote (by its naming convention: fleet-report-* systemd user timers, dev.fleet.report-* launchd agents, fleet-report-* task definitions) and prints each with its interval and command line, whether it is installed or half-installed (a file missing, or — linux — a timer the user manager does not run), the last run the manager recorded (systemctl --user show: Result, ExecMainStatus, timestamps, ActiveState — running while it runs; for drift and version, exit 1 is drift found, not a failure) and the last line of the repository reports/runs.log. Writes nothing.';
  static override examples = [
    '<%= config.bin %> schedule list',
    '<%= config.bin %> schedule list --json',
  ];

  async run(): Promise<ScheduleListJson> {
    await this.parse(ScheduleList);
    const service = await this.service(ScheduleService);
    const schedules = await service.list();
    if (schedules.length === 0) this.log('No fleet schedules installed.');
    for (const schedule of schedules) {
      this.log(
        `${schedule.name.padEnd(32)} ${schedule.state.padEnd(14)} every ${(schedule.every ?? '?').padEnd(6)} ${escapeControl(schedule.command.join(' '))}`,
      );
      if (schedule.detail !== null) this.log(`  ${escapeControl(schedule.detail)}`);
      if (schedule.lastRun !== null)
        this.log(`  last run: ${describeLastRun(schedule.lastRun, jobOf(schedule.command))}`);
      if (schedule.lastLog !== null) this.log(`  last logged: ${escapeControl(schedule.lastLog)}`);
    }
    return { schema: 'fleet.schedules/v1', schedules };
  }
}
