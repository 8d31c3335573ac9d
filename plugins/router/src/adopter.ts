/**
 * The router adopter (contract §6, §8.5): the config file is managed whole, so the whole capture is
 * the canonical candidate (the core has already redacted it on the node, reverse-substituted the
 * host's variables and scanned it for secrets). It lands in `mirror/<host>/router/router.yaml`;
 * promoting it to `domains/router/router.yaml` is an ordinary reviewed git change. The installed
 * volume is derived, never adopted: it has no canonical file of its own.
 */
import { parseRepoPath, type Adopter, type Capture, type ManagedFile } from '@fleet/core/plugin';
import { routerDomain } from './domain.js';

const DOMAIN = routerDomain.domain;

function mirrorPath(file: ManagedFile, capture: Capture): string {
  const path = `mirror/${capture.host}/${DOMAIN}/${file.id}`;
  parseRepoPath(path);
  return path;
}

/** The domain's adopter, loaded lazily by the registry (`register.ts`). */
export const routerAdopter: Adopter = {
  domain: DOMAIN,
  candidate: (_file, capture) => capture.content,
  mirrorPath,
};
