/**
 * The base of this plugin's commands: core's public `FleetBaseCommand` (`@fleet/core/command`),
 * the same base the CLI's commands extend, so `--json`, the error envelope and the exit codes
 * (contract §2, §7) are the CLI's own. It lives outside `src/commands/`, where oclif would take
 * it for a command.
 */
import { FleetBaseCommand } from '@fleet/core/command';

export abstract class PluginCommand extends FleetBaseCommand {}
