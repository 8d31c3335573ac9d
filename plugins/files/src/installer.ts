/**
 * The files installer (contract §6, §8.4, §10.4). Coupling: none — writing the files is the whole
 * operation, so it is core's {@link fileInstaller} for a domain whose files are declared in the
 * repository: a `whole` entry's view is its rendered source, a `block` entry's view its rendered
 * source as the block's body, and the node half resolves secrets, reads, checks and splices every
 * file before the first write (a block file's markers come with its request: the node never reads
 * the repository), then writes, reads back and restores on failure. Which paths may be written is
 * the node's own decision (its policy's `domains.files.patterns`), checked by the controller
 * before this runs.
 */
import { fileInstaller, type Installer } from '@fleet/core/plugin';
import { filesDomain } from './domain.js';
import { parseFilesManifest } from './manifest.js';

/** The domain's installer, loaded lazily by the registry (`register.ts`). */
export const filesInstaller: Installer = fileInstaller({
  domain: filesDomain.domain,
  repoFiles: parseFilesManifest,
});
