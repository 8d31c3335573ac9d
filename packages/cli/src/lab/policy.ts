/**
 * A lab node's local bootstrap policy (contract §12): `<home>/.local/state/fleet/bootstrap-policy.json`
 * = `{ "version": 1, "bootstrap": "allow", "supervisors": ["lab"] }` (`["systemd-user"]` for a lab of
 * real units). A lab is a sandbox, so its nodes allow bootstrap through the supervisor that runs
 * them; a real node has no such file (deny) until its
 * owner writes one. `fleet lab up` writes it once, when the node has none: a lab brought up again
 * keeps whatever its policy says by then.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** `~/`-relative, under the node's state dir (0700). */
export const BOOTSTRAP_POLICY_PATH = '.local/state/fleet/bootstrap-policy.json';

export const LAB_BOOTSTRAP_POLICY = {
  version: 1,
  bootstrap: 'allow',
  supervisors: ['lab'],
} as const;

/**
 * Writes the lab's policy into `home` (mode 0600, parents 0700) unless one is there, and returns
 * its path. Written whole to a temp file first and linked into place: never half a file, and an
 * existing policy is never replaced.
 */
export async function writeLabBootstrapPolicy(
  home: string,
  supervisor: 'lab' | 'systemd-user' = 'lab',
): Promise<string> {
  const path = join(home, ...BOOTSTRAP_POLICY_PATH.split('/'));
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = join(dirname(path), `.fleet-tmp-policy-${randomBytes(6).toString('hex')}`);
  const policy = { ...LAB_BOOTSTRAP_POLICY, supervisors: [supervisor] };
  await writeFile(temp, `${JSON.stringify(policy, null, 2)}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  try {
    await link(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return path;
}
