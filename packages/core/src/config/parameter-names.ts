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

/** The role of the action a domain runs after writing (fleet.yaml `domains.<domain>.reload`). */
export const RELOAD_ROLE = 'reload';

/** The node path a prober was given for one of its domain's ids, else the declared default. */
export function probedPath(parameters: JsonObject, id: string, fallback: string): string {
  const paths = parameters['paths'];
  if (paths !== null && typeof paths === 'object' && !Array.isArray(paths)) {
    const value = (paths as JsonObject)[id];
    if (typeof value === 'string') return value;
  }
  return fallback;
}
