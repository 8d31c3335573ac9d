/**
 * `@fleet/core/command`: the base of every fleet command — the CLI's and a plugin's alike — so a
 * plugin author extends one public class instead of copying the CLI's. A separate entry point,
 * because it extends oclif's `Command`: only commands need oclif, and `@fleet/core`'s main entry
 * stays free of it.
 *
 * It also hands out the oclif it is built on — the parts fleet's commands use (`Flags`, `Args`,
 * `Errors`) and the CLI's entry (`execute`, `settings`) — from inside core's bundle: the CLI and
 * its bundled plugins import oclif here, not from `@oclif/core`, so a fleet process loads one
 * bundled oclif instead of its 160 modules (docs/adr/0011-core-ships-a-bundle.md). Types still
 * come from `@oclif/core`. A third-party plugin may import `@oclif/core` itself, as oclif plugins
 * always may: its commands then run on its own copy.
 *
 * The types it names (`Registry`, `FleetErrorLike`) are `@fleet/core`'s main entry's.
 */
export { Args, Errors, Flags, execute, settings, toConfiguredId } from '@oclif/core';
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
