/**
 * The refusals every installer's node half makes before anything else (contract §6): a request
 * for another domain, and — for a domain whose install writes one file — a request that is not
 * exactly that file. `BAD_REQUEST`, nothing written. One copy, so that every installer words and
 * codes them alike.
 */
import { FleetError } from '../errors.js';
import type { InstallFileRequest, NodeInstallRequest } from '../interfaces/installer.js';

/** Refuses a request for a domain other than the installer's own. */
export function requireDomain(request: NodeInstallRequest, domain: string): void {
  if (request.domain !== domain) {
    throw new FleetError(
      'BAD_REQUEST',
      `installer for ${domain} was asked to install domain ${request.domain}`,
    );
  }
}

/** Refuses a request that names one of the domain's files twice. */
export function requireDistinctFiles(request: NodeInstallRequest, domain: string): void {
  if (new Set(request.files.map((f) => f.fileId)).size !== request.files.length) {
    throw new FleetError('BAD_REQUEST', `${domain}: a file appears twice in one install request`);
  }
}

/** What a one-file domain's install writes, for its refusal. */
export interface OneFile {
  /** The domain. */
  readonly domain: string;
  /** The one file's id in the domain's declaration. */
  readonly fileId: string;
  /** The file, as the refusal names it: `its config file`, `the identity file`. */
  readonly name: string;
  /** Why no other file is written, when there is more to say (`the volume is derived from it`). */
  readonly why?: string;
}

/**
 * The one file of a request to a domain whose install writes exactly one file: refuses a request
 * for another domain, with no file, with more than one or with another file.
 */
export function oneFileRequest(request: NodeInstallRequest, one: OneFile): InstallFileRequest {
  requireDomain(request, one.domain);
  const [file, ...extra] = request.files;
  if (file === undefined || extra.length > 0 || file.fileId !== one.fileId) {
    throw new FleetError(
      'BAD_REQUEST',
      `${one.domain}: an install writes exactly ${one.name} (${one.fileId})${one.why === undefined ? '' : `; ${one.why}`}`,
    );
  }
  return file;
}
