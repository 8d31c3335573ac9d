/**
 * A domain's safe reader (core `SafeFileReader`): the reads a prober makes of the domain's own
 * files, through the same checks as an install (the allowlist for that domain, no symlinked
 * component, nothing outside the home, the size bound).
 */
import type { SafeFileReader } from '@fleet/core/node';
import { managedTarget } from './fs/managed-target.js';
import { readLive, type ReadSession } from './fs/safe-path.js';
import type { ControllerRuntime } from './runtime.js';
import { readWritten } from './written.js';

/**
 * Inside a request that reads files itself (a snapshot's probers): the request's
 * {@link ReadSession}, and where to note the files this reader read (absolute paths), so a file
 * the request's final re-check refuses refuses the prober that read it too.
 */
export interface SessionReads {
  readonly session: ReadSession;
  readonly read: Set<string>;
}

export function domainReader(
  runtime: Pick<ControllerRuntime, 'home' | 'allowlist' | 'limits' | 'state'>,
  domain: string,
  within?: SessionReads,
): SafeFileReader {
  return {
    async read(path) {
      runtime.allowlist.require(path, domain);
      const target = await managedTarget(runtime.home, path, runtime.allowlist.symlinkDirs);
      let live;
      if (within === undefined) {
        live = await readLive(runtime.home, target, runtime.limits.maxFileBytes);
      } else {
        within.read.add(target.absolute);
        live = await within.session.read(target);
      }
      return live === null ? null : { content: live.bytes, sha256: live.sha256 };
    },
    async wrote(path, sha256) {
      runtime.allowlist.require(path, domain);
      const writes = (await readWritten(runtime.state)).get(path) ?? [];
      return writes.some((write) => write.sha256 === sha256);
    },
  };
}
