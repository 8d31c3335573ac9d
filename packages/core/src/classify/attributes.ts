/**
 * What a file holds besides its text, classified like its text (contract §8.2, §10.4;
 * docs/classification.md "Modes and rotated secrets"), pure. The rule is the same as for content:
 * fleet replaces without `--force` only what it can prove nobody changed by hand.
 *
 * **Mode.** The node records, with each content it wrote, the permission bits it wrote it with
 * (`written.json`). A live mode other than the one fleet last wrote is a hand change — narrowed
 * (`chmod 600` on a file fleet wrote 0644: chezmoi shows it as a change since its last write) or
 * widened alike — so the file is `modified` and refused without `--force`. A live mode equal to the
 * one fleet wrote, while the repository now says another, is `stale`: the repository changed it.
 * Without a recorded mode (fleet never wrote the file, or wrote it before it kept modes) nothing is
 * proven either way, so only the safe direction is taken silently: a file that grants more than the
 * repository says (readable by others) is `stale` and the install narrows it; a file that lacks a
 * permission the repository grants (someone made it private) is `modified`: fleet does not widen
 * what it cannot prove it set.
 *
 * **Rotated secrets.** The node knows, without sending a value, which secret names a live file
 * holds an earlier value of (its secret memory). Such a file is `stale` however equal its redacted
 * text looks: the host still holds the old value, and the install writes the new one.
 */

/** What is known of one whole file's permission bits (`"0644"`; absent: nothing to say). */
export interface ModeFacts {
  /** The mode the repository says (a files entry's `mode`, or its default). */
  readonly wanted?: string;
  /** The live file's mode, as the node reported it. */
  readonly live?: string;
  /** The mode fleet wrote the live content with, from the node's record. */
  readonly written?: string;
}

export type ModeClassification =
  | { readonly state: 'current' }
  | {
      readonly state: 'stale';
      readonly live: string;
      readonly wanted: string;
      /** Set when fleet wrote it so (the repository changed since); absent: nothing recorded. */
      readonly written?: string;
    }
  | {
      readonly state: 'modified';
      readonly live: string;
      readonly wanted: string;
      readonly written?: string;
      /** Against fleet's last write (or, without one, against the repository's mode). */
      readonly change: 'narrowed' | 'widened' | 'changed';
    };

const bits = (mode: string): number => Number.parseInt(mode, 8) & 0o777;

/** How `after` differs from `before`: only permissions taken, only given, or both. */
export function modeChange(before: string, after: string): 'narrowed' | 'widened' | 'changed' {
  const taken = bits(before) & ~bits(after);
  const given = bits(after) & ~bits(before);
  if (given === 0) return 'narrowed';
  if (taken === 0) return 'widened';
  return 'changed';
}

/** Classifies a whole file's mode (see the module comment). */
export function classifyMode(facts: ModeFacts): ModeClassification {
  const { wanted, live, written } = facts;
  if (wanted === undefined || live === undefined || live === wanted) return { state: 'current' };
  if (written !== undefined) {
    if (live === written) return { state: 'stale', live, wanted, written };
    return { state: 'modified', live, wanted, written, change: modeChange(written, live) };
  }
  // Nothing recorded: narrowing to the repository's mode is safe, widening is not proven.
  if ((bits(wanted) & ~bits(live)) === 0) return { state: 'stale', live, wanted };
  return { state: 'modified', live, wanted, change: modeChange(wanted, live) };
}

/** A mode classification in words, for an item's detail. */
export function describeMode(mode: Exclude<ModeClassification, { state: 'current' }>): string {
  if (mode.state === 'stale') {
    return mode.written === undefined
      ? `mode ${mode.live} grants more than the repository's ${mode.wanted}; safe to narrow`
      : `mode ${mode.live} is the one fleet wrote; the repository now says ${mode.wanted}; safe to replace`;
  }
  return mode.written === undefined
    ? `mode ${mode.live} lacks permissions the repository's ${mode.wanted} grants, and fleet has no record of writing it so: a hand change`
    : `mode ${mode.live}, ${mode.change} by hand since fleet wrote it ${mode.written} (the repository says ${mode.wanted})`;
}

/**
 * The default mode of a files entry without `mode` (contract §10.4), pure: what the node creates a
 * new file with — 0644, as chezmoi (`0666 &^ umask`) and Ansible `copy` under the usual umask do —
 * or 0600 when it renders a secret (chezmoi's `private_`): a file holding a secret is never created
 * readable by others. `null`: a file that exists keeps its own mode (Ansible `copy` without `mode`),
 * unless it renders a secret: then 0600 is its mode, compared and set like a declared one.
 */
export function defaultFileMode(rendersSecret: boolean, exists: boolean): string | null {
  if (rendersSecret) return '0600';
  return exists ? null : '0644';
}
