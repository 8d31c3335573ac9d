/**
 * The router's `derived` layer (contract §10.1): the installed volume the router process reads must
 * equal the config file — an edit of the file does nothing until the volume is written, and a
 * hand edit of the volume is invisible to the file layer.
 *
 * Node half (`collect`, read-only): the sha256 of both files, read through the controller's safe
 * reads (the domain's allowlist, no symlinks); no content leaves the node. Operator half
 * (`evaluate`): one `derived` item for the volume — `current` when both are equal (or neither
 * exists yet), `missing` when the file exists but the volume does not, `stale` when they differ
 * and the volume is a version fleet wrote, `modified` when it is none (a hand fix in the volume:
 * refused by install without --force, like a hand change in a file, contract §8.2). The node
 * says which from its record of fleet's writes (`SafeFileReader.wrote`), never sending content.
 */
import {
  FleetError,
  createHomeFileReader,
  probedPath,
  type DriftItem,
  type JsonObject,
  type JsonValue,
  type NodeContext,
  type Prober,
} from '@fleet/core/plugin';
import { routerDomain } from './domain.js';

const CONFIG = routerDomain.files[0];
const VOLUME = routerDomain.derivedPaths[0];

export const ROUTER_VOLUME_PROBER = 'router.volume';
export const VOLUME_DIFFERS = 'the installed volume differs from the config file';

export interface RouterVolumeFacts extends JsonObject {
  readonly file: { readonly path: string; readonly sha256: string | null };
  readonly volume: {
    readonly path: string;
    readonly sha256: string | null;
    /**
     * Whether the volume's bytes are a content fleet wrote there (the node's record), when it
     * differs from the config file and the node keeps a record: `false` is a hand fix.
     */
    readonly fleetWrote?: boolean;
  };
}

async function collect(ctx: NodeContext, parameters: JsonObject): Promise<RouterVolumeFacts> {
  const reader = ctx.files ?? createHomeFileReader(ctx.home);
  const filePath = probedPath(parameters, CONFIG.id, CONFIG.path);
  const volumePath = probedPath(parameters, VOLUME.id, VOLUME.path);
  const [file, volume] = [await reader.read(filePath), await reader.read(volumePath)];
  const differs = volume !== null && volume.sha256 !== file?.sha256;
  const fleetWrote =
    differs && reader.wrote !== undefined
      ? await reader.wrote(volumePath, volume.sha256)
      : undefined;
  return {
    file: { path: filePath, sha256: file?.sha256 ?? null },
    volume: {
      path: volumePath,
      sha256: volume?.sha256 ?? null,
      ...(fleetWrote === undefined ? {} : { fleetWrote }),
    },
  };
}

/** The facts as the node sent them, checked: they crossed the wire. */
function factsOf(value: JsonValue): RouterVolumeFacts {
  const side = (
    v: unknown,
  ): { path: string; sha256: string | null; fleetWrote?: boolean } | undefined => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const { path, sha256, fleetWrote } = v as Record<string, unknown>;
    if (typeof path !== 'string') return undefined;
    if (sha256 !== null && (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)))
      return undefined;
    if (fleetWrote !== undefined && typeof fleetWrote !== 'boolean') return undefined;
    return { path, sha256, ...(fleetWrote === undefined ? {} : { fleetWrote }) };
  };
  const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const file = side((object as JsonObject)['file']);
  const volume = side((object as JsonObject)['volume']);
  if (!file || !volume) {
    throw new FleetError(
      'RESPONSE_INVALID',
      `${ROUTER_VOLUME_PROBER}: the node's facts are malformed`,
    );
  }
  return { file, volume };
}

function evaluate(value: JsonValue): readonly DriftItem[] {
  const facts = factsOf(value);
  const base = { layer: 'derived' as const, domain: routerDomain.domain, path: facts.volume.path };
  const { file, volume } = facts;
  if (file.sha256 === volume.sha256) {
    return [
      {
        ...base,
        state: 'current',
        detail:
          file.sha256 === null
            ? 'neither the config file nor the installed volume exists yet'
            : `the installed volume equals ${file.path}`,
      },
    ];
  }
  if (volume.sha256 === null) {
    return [
      {
        ...base,
        state: 'missing',
        detail: `the installed volume does not exist; ${file.path} does`,
      },
    ];
  }
  if (volume.fleetWrote === false) {
    // Classified like a file (contract §8.2): bytes fleet never derived are a hand fix.
    return [
      {
        ...base,
        state: 'modified',
        detail: `${VOLUME_HAND_CHANGE} (${file.sha256 === null ? `${file.path} does not exist` : file.path}): a hand change, never replaced without --force — put the fix in the canonical router.yaml, or overwrite it with \`fleet config install HOST router --confirm --force\``,
      },
    ];
  }
  return [
    {
      ...base,
      state: 'stale',
      detail:
        file.sha256 === null
          ? `${VOLUME_DIFFERS} (${file.path} does not exist)`
          : `${VOLUME_DIFFERS} (${file.path})${volume.fleetWrote === true ? ' and is a version fleet wrote there' : ''}; install the router domain to write it again`,
    },
  ];
}

export const VOLUME_HAND_CHANGE =
  'the installed volume equals neither the config file nor any version fleet wrote there';

/** The domain's prober, loaded lazily by the registry (`register.ts`). */
export const routerVolumeProber: Prober = {
  id: ROUTER_VOLUME_PROBER,
  layer: 'derived',
  collect,
  evaluate,
};
