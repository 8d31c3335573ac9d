/**
 * The gitconfig adopter (fleet `Adopter`): core's `fileAdopter`. When a host's block was edited by
 * hand and the operator decides the repository should admit it (`fleet config adopt HOST
 * ~/.gitconfig`), the candidate is the block's body only — the user's own lines outside the
 * markers are theirs and are never adopted. The core has already redacted secrets on the node,
 * reverse-substitutes host variables (`ops@example.org` → `{{ host.git_email }}`) and scans for
 * secrets; the candidate lands in `mirror/<host>/gitconfig/gitconfig`, to be promoted to the
 * canonical by an ordinary commit (or `--promote`).
 */
import { fileAdopter, type Adopter } from '@fleet/core/plugin';
import { DOMAIN } from './domain.js';

/** Makes the domain's adopter (loaded lazily through `register.ts`). */
export function createGitconfigAdopter(): Adopter {
  return fileAdopter({ domain: DOMAIN });
}
