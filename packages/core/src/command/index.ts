/**
 * `@fleet/core/command`: the base of every fleet command — the CLI's and a plugin's alike — so a
 * plugin author extends one public class instead of copying the CLI's. A separate entry point,
 * because it extends oclif's `Command`: `@oclif/core` is a peer dependency that only commands
 * need, and `@fleet/core`'s main entry stays free of it.
 *
 * The types it names (`Registry`, `FleetErrorLike`) are `@fleet/core`'s main entry's.
 */
export {
  FleetBaseCommand,
  failureOf,
  failureLines,
  reportedFailure,
  type CommandError,
} from './base.js';
export { WaitingProgress } from './waiting.js';
export {
  colourEnabled,
  loadPalette,
  plainPalette,
  stateTone,
  type ColourInputs,
  type Palette,
  type Tone,
} from './colour.js';
