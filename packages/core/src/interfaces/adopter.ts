import type { ManagedFile } from './domain.js';

/** A live file captured on a node, already redacted there (secrets back to placeholders). */
export interface Capture {
  /** The host it was captured on. */
  readonly host: string;
  /** Its `~/` path on the node. */
  readonly path: string;
  /** sha256 of the live bytes (before redaction), for the `Fleet-Live-Sha256` trailer. */
  readonly sha256: string;
  /** The live content, redacted on the node (secret values back to `{{ secret.NAME }}`). */
  readonly content: string;
  /**
   * Whether the node redacted a secret's value in it (the capture answer's `redacted`). Absent:
   * not known, so a `{{ secret.NAME }}` in it may be one (adopt then treats it as one).
   */
  readonly redacted?: boolean;
  /** The controller's build identity, for the `Fleet-Controller` trailer. */
  readonly controller: string;
}

/**
 * A domain's adopter (contract §6, §8.5). Reverse substitution of host variables and the secret scan
 * are the core's; the adopter decides what part of a capture is a canonical candidate and where in
 * `mirror/<host>/<domain>/` it goes.
 */
export interface Adopter {
  /** The domain it adopts for (checked against its descriptor when loaded). */
  readonly domain: string;
  /** The part of the capture that is a canonical candidate (a block file: its block). */
  candidate(file: ManagedFile, capture: Capture): string;
  /** Repo path under `mirror/<host>/<domain>/` for the candidate. */
  mirrorPath(file: ManagedFile, capture: Capture): string;
  /**
   * `adopt --promote` of a file that is not the whole canonical (a block viewed from a section of
   * it): the canonical text with `candidate` (reverse-substituted) as the part `file` is viewed
   * from. Optional; without it a block file cannot be promoted (a whole file needs no adopter: the
   * candidate is the canonical).
   */
  promote?(file: ManagedFile, canonical: string, candidate: string): string;
}
