/**
 * Writing the node policy file (docs/node-policy.md) — on the node only: `fleet node-policy init`,
 * `fleet lab up`, the one-time migration of the old bootstrap policy, and tests. No route of the
 * controller calls this. The file is written whole to a temp file (0600, exclusive) in its own
 * directory, fsync'd, then linked into place (never replacing a policy) or, with `force`,
 * renamed over it; the directory is fsync'd. Its parents are created 0700.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  FleetError,
  formatNodePolicy,
  nodePolicyFile,
  type NodePolicyInput,
} from '@fleet/core/node';
import { createExclusive, fsyncDir } from '../fs/durable.js';
import { errnoOf } from '../fs/errors.js';
import { TEMP_PREFIX } from '../state-paths.js';

export interface WriteNodePolicyOptions {
  /** Replace an existing policy (default: refuse with `INIT_TARGET_NOT_EMPTY`). */
  readonly force?: boolean;
}

/** Writes `policy` as `home`'s node policy; returns the file's path. */
export async function writeNodePolicy(
  home: string,
  policy: NodePolicyInput | string,
  options: WriteNodePolicyOptions = {},
): Promise<string> {
  const file = nodePolicyFile(home);
  const text = typeof policy === 'string' ? policy : formatNodePolicy(policy);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = join(dirname(file), `${TEMP_PREFIX}policy-${randomBytes(6).toString('hex')}`);
  await createExclusive(temp, text);
  try {
    if (options.force) {
      await rename(temp, file);
    } else {
      try {
        await link(temp, file);
      } catch (error) {
        if (errnoOf(error) === 'EEXIST') {
          throw new FleetError('INIT_TARGET_NOT_EMPTY', `${file} exists: not replaced`, {
            suggestions: ['review it with fleet node-policy show; replace it with --force'],
          });
        }
        throw error;
      }
    }
    await fsyncDir(dirname(file));
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return file;
}
