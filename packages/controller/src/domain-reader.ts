/**
 * A domain's safe reader (core `SafeFileReader`): the reads a prober makes of the domain's own
 * files, through the same checks as an install (the allowlist for that domain, no symlinked
 * component, nothing outside the home, the size bound).
 */
import type { SafeFileReader } from '@fleet/core/node';
import { managedTarget } from './fs/managed-target.js';
import { readLive } from './fs/safe-path.js';
import type { ControllerRuntime } from './runtime.js';

export function domainReader(
  runtime: Pick<ControllerRuntime, 'home' | 'allowlist' | 'limits'>,
  domain: string,
): SafeFileReader {
  return {
    async read(path) {
      runtime.allowlist.require(path, domain);
      const live = await readLive(
        runtime.home,
        await managedTarget(runtime.home, path, runtime.allowlist.symlinkDirs),
        runtime.limits.maxFileBytes,
      );
      return live === null ? null : { content: live.bytes, sha256: live.sha256 };
    },
  };
}
