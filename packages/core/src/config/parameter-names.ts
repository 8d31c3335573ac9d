/**
 * The names both halves of an install agree on (contract §5.1, §8.4), pure and without the
 * repository model: the operator fills them in (`config/parameters.ts`), the node's installers
 * and probers read them — so a node loads this and not the operator's repo loader.
 */
import type { JsonObject } from '../interfaces/drift.js';

/** The install parameter holding a derived path's node path (`fleet.derived.volume`). */
export function derivedPathParameter(id: string): string {
  return `fleet.derived.${id}`;
}

/**
 * The roles a domain's install request gives the node policy's actions (`request.actions`, filled
 * from fleet.yaml `domains.<domain>.validate|reload|restart`; docs/plugin-authoring.md §7):
 * - `validate`: run on each changed file's new content, staged beside it, *before* it replaces the
 *   old (its argv names the staged file as `{file}`); a failure replaces nothing;
 * - `reload`: run once after every file is written (a process re-reads its configuration);
 * - `restart`: run once after the reload (a process that only reads it at start).
 * A failed reload or restart restores every written file and runs what ran again (`ACTION_FAILED`).
 */
export const VALIDATE_ROLE = 'validate';
/** See {@link VALIDATE_ROLE}: the action run after writing (fleet.yaml `domains.<domain>.reload`). */
export const RELOAD_ROLE = 'reload';
/** See {@link VALIDATE_ROLE}: the action run after the reload (fleet.yaml `domains.<domain>.restart`). */
export const RESTART_ROLE = 'restart';
/** Every role fleet.yaml may fill, in the order an install runs them. */
export const ACTION_ROLES = [VALIDATE_ROLE, RELOAD_ROLE, RESTART_ROLE] as const;
export type ActionRole = (typeof ACTION_ROLES)[number];

/** The node path a prober was given for one of its domain's ids, else the declared default. */
export function probedPath(parameters: JsonObject, id: string, fallback: string): string {
  const paths = parameters['paths'];
  if (paths !== null && typeof paths === 'object' && !Array.isArray(paths)) {
    const value = (paths as JsonObject)[id];
    if (typeof value === 'string') return value;
  }
  return fallback;
}
