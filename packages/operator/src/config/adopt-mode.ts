/**
 * `fleet config adopt` takes content only (contract §8.5, §10.4): a files entry's `mode` is never
 * adopted. The note that says so is for a file whose live mode differs from its entry's — the one
 * case where an operator could think adopt kept the live mode. A file whose mode is the entry's,
 * or whose node reports none (Windows, a node that could not be asked), gets no note.
 */
import type { ManagedFile } from '@fleet/core';
import type { FleetContext } from './context.js';

/** The note for `path`, or `null` when its live mode does not differ from the entry's (pure). */
export function adoptModeNote(
  path: string,
  file: Pick<ManagedFile, 'kind' | 'mode'>,
  liveMode: string | undefined,
): string | null {
  if (file.mode === undefined || file.kind !== 'whole') return null;
  if (liveMode === undefined || liveMode === file.mode) return null;
  return `adopt takes content only: ${path} keeps the mode ${file.mode} its files.yaml entry says, not its live ${liveMode} (a mode-only difference has nothing to adopt: change the entry's mode, or fleet config install sets it back)`;
}

/**
 * The live mode of a whole file whose entry declares one, as the node reports it (one snapshot
 * request asking for the mode); `undefined` for any other file, when the node reports none, or
 * when it cannot be asked (the note is then not given: adopt itself does not depend on it).
 */
export async function liveModeFor(
  context: Pick<FleetContext, 'client'>,
  host: string,
  domain: string,
  file: Pick<ManagedFile, 'kind' | 'mode'>,
  path: string,
): Promise<string | undefined> {
  if (file.mode === undefined || file.kind !== 'whole') return undefined;
  try {
    const answer = await context
      .client(host)
      .snapshot({ files: [{ domain, path, mode: true }], backups: false });
    const live = answer.files.find((entry) => entry.path === path);
    return live?.state === 'present' ? live.mode : undefined;
  } catch {
    return undefined;
  }
}
