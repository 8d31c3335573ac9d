/**
 * contract §10.3's one exception to "no timer ever writes": `harness reconcile --unattended` may be
 * scheduled only when fleet.yaml at HEAD (a reviewed commit) — and the working tree — set
 * `domains.harness-policy.unattended: allow`. The gate is core's `unattendedRefusal`, the one the
 * harness reconcile re-checks on every scheduled run; the domain's coupling comes from its
 * declaration as registered (plugins are reached only through the registry).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  FleetError,
  MANIFEST_FILE,
  createGit,
  parseManifest,
  unattendedRefusal,
  type Registry,
} from '@fleet/core';

const DOMAIN = 'harness-policy';

type Policy = 'allow' | 'deny';

/** Throws `UNATTENDED_REFUSED` (exit 7) unless the committed and working fleet.yaml opt in. */
export async function assertUnattendedAllowed(root: string, registry: Registry): Promise<void> {
  const git = createGit(root);
  const committed = await git.run(['show', `HEAD:${MANIFEST_FILE}`], { allowFailure: true });
  let committedPolicy: Policy | undefined;
  if (committed.exitCode === 0) {
    try {
      committedPolicy =
        parseManifest(committed.stdout, `${MANIFEST_FILE} at HEAD`).domains[DOMAIN]?.unattended ??
        'deny';
    } catch {
      committedPolicy = undefined;
    }
  }
  let worktree: Policy = 'deny';
  try {
    const text = await readFile(join(root, MANIFEST_FILE), 'utf8');
    worktree = parseManifest(text).domains[DOMAIN]?.unattended ?? 'deny';
  } catch {
    worktree = 'deny';
  }
  const refusal = unattendedRefusal({
    domain: DOMAIN,
    coupling: registry.domain(DOMAIN).descriptor.coupling,
    worktree,
    committed: committedPolicy,
  });
  if (refusal !== null) {
    throw new FleetError('UNATTENDED_REFUSED', `schedule refused: ${refusal}`, {
      suggestions: [
        `commit domains.${DOMAIN}.unattended: allow in ${MANIFEST_FILE} after review, or run \`fleet harness reconcile --confirm\` yourself`,
      ],
    });
  }
}
