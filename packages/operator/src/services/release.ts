/**
 * `fleet release` and `fleet release verify`'s service: packs the runtime of the fleet you run
 * from its checkout, keeps it in the repository's artifact store, signs it and pins it as
 * fleet.yaml's canonicalVersion (release/release.ts; docs/releases.md, ADR 0018); and rebuilds a
 * pinned release from its commit to compare the bytes (release/release-verify.ts; contract §1.8).
 * Needs no plugin: nothing is injected.
 */
import { injectable } from '@fleet/core/di';
import { release, type ReleaseOptions, type ReleaseResult } from '../release/release.js';
import { verifyRelease, type VerifyOptions, type VerifyResult } from '../release/release-verify.js';

export type { ReleaseOptions, ReleaseResult } from '../release/release.js';
export type { VerifyOptions, VerifyResult } from '../release/release-verify.js';

@injectable()
export class ReleaseService {
  /** Plans the release, or (`confirm`) packs, stores, signs, pins and commits it. */
  release(options: ReleaseOptions): Promise<ReleaseResult> {
    return release(options);
  }

  /** Rebuilds a pinned release and compares it with the pin (`restore`: into the store). */
  verify(options: VerifyOptions): Promise<VerifyResult> {
    return verifyRelease(options);
  }
}
