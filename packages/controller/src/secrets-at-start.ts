/**
 * The node's secrets at a controller's start (docs/secrets.md): the secret memory reconciled with
 * every file that may hold a resolved value, and the values too short to be redacted named once.
 * `startNode` (controller.ts) runs both after recovery, once the env-file chain is read, and
 * before the identity coupling is checked.
 */
import { shortSecretNames, type SecretValues } from '@fleet/core/node';
import type { Allowlist } from './allowlist.js';
import { allBackupPaths } from './backups.js';
import type { SecretMemory } from './secret-memory.js';
import type { StatePaths } from './state-paths.js';

/**
 * The secret memory re-read at start against every file that can hold a resolved value (every
 * managed file, every backup, every recorded holder): values written before the memory existed are
 * found, values no file holds any more are forgotten (docs/secrets.md).
 */
export async function reconcileSecretMemory(
  home: string,
  state: StatePaths,
  allowlist: Allowlist,
  memory: SecretMemory,
  chain: SecretValues | undefined,
): Promise<void> {
  const paths = [
    ...allowlist.all().map((entry) => entry.path),
    ...(await allBackupPaths(home, state.backups)),
    ...memory.holders(),
  ];
  await memory.reconcile(paths, chain ?? new Map());
}

/**
 * A value under the 8-character floor is not an error until a file uses it (the chain may serve
 * other tools): an install that needs it is refused (`SECRET_TOO_SHORT`). Said once at start, by
 * name, since such a value is never redacted (docs/secrets.md).
 */
export function warnShortSecrets(chain: SecretValues | undefined): void {
  const short = chain === undefined ? [] : shortSecretNames(chain);
  if (short.length === 0) return;
  process.stderr.write(
    `controller: the env-file chain holds ${short.join(', ')}, shorter than 8 characters: never redacted, and an install that uses ${short.length > 1 ? 'them' : 'it'} is refused (SECRET_TOO_SHORT)\n`,
  );
}
