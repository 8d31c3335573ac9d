/** The items every drift producer (installers' file layer, probers) reports. SPEC §8.1. */

export type DriftLayer = 'file' | 'derived' | 'runtime' | 'version';

export type DriftState =
  | 'current'
  | 'stale'
  | 'diverged'
  | 'missing'
  | 'unmanaged'
  | 'unsupported'
  | 'error';

export interface DriftItem {
  readonly layer: DriftLayer;
  readonly domain?: string;
  /** `~/`-relative node path, when the item is about a file. */
  readonly path?: string;
  readonly state: DriftState;
  /** Lines found in no published version (for `diverged`). */
  readonly localLines?: number;
  readonly detail?: string;
  /** Redacted unified diff, desired vs live. */
  readonly diff?: string;
}

/** JSON values: what facts and parameters are allowed to be, since they cross the wire. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };
