/** The items every drift producer (installers' file layer, probers) reports. contract §8.1. */

/** What a drift item is about: a managed file, a derived copy, runtime state, or versions. */
export type DriftLayer = 'file' | 'derived' | 'runtime' | 'version';

/** How a layer compares with the desired state (contract §8.1, §8.2; docs/classification.md). */
export type DriftState =
  | 'current'
  | 'stale'
  | 'modified'
  | 'diverged'
  | 'missing'
  | 'deleted'
  | 'unmanaged'
  | 'unsupported'
  | 'error';

/** One finding of a drift producer. */
export interface DriftItem {
  readonly layer: DriftLayer;
  /** The domain it belongs to, if any. */
  readonly domain?: string;
  /** `~/`-relative node path, when the item is about a file. */
  readonly path?: string;
  readonly state: DriftState;
  /** Lines found in no published version (for `diverged`). */
  readonly localLines?: number;
  /** One line for the operator: why, and what to do. */
  readonly detail?: string;
  /** Redacted unified diff, desired vs live. */
  readonly diff?: string;
}

/** JSON values: what facts and parameters are allowed to be, since they cross the wire. */
export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
/** A JSON object (parameters, facts). */
export type JsonObject = { readonly [key: string]: JsonValue };
