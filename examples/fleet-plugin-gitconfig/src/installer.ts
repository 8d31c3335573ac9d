/**
 * The gitconfig installer (fleet `Installer`): core's `fileInstaller` for the domain's one block
 * file, with a check of its own — the block's body must be git-config syntax (`fragment.ts`).
 *
 * Operator half (pure): the desired view of `~/.gitconfig` is the block's body, i.e. the rendered
 * canonical `domains/gitconfig/gitconfig` in template space (LF endings, secrets still
 * `{{ secret.NAME }}`); the managed part of a live file is its block's body, or `null` when it has
 * no block. `check` refuses what could not be installed (a marker inside the body, a body that is
 * not git-config syntax), so a bad canonical shows up as an `error` item in `fleet drift` and is
 * never sent to a node.
 *
 * Node half (core's): secrets resolved, the body checked again, the live file read through the
 * controller's `SafeFileWriter` and compared with the sha256 the operator planned against, the
 * block spliced in (everything outside it byte for byte), one compare-and-swap `replace` (backup +
 * atomic write), then a read-back of the sha256. Any failure after the write restores the file.
 */
import { fileInstaller, type Installer } from '@fleet/core/plugin';
import { DOMAIN, gitconfigDomain } from './domain.js';
import { fragmentProblems } from './fragment.js';

/** Makes the domain's installer (the registry loads it lazily through `register.ts`). */
export function createGitconfigInstaller(): Installer {
  return fileInstaller({
    domain: DOMAIN,
    files: gitconfigDomain.files,
    check: (_file, body, source) => fragmentProblems(body, source),
  });
}
