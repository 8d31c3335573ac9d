/**
 * The starship installer: core's `fileInstaller` for the domain's one whole file, with the TOML
 * check (`toml.ts`) — on the operator before planning (a bad canonical is an `error` item in
 * `fleet drift`, never sent), and on the node again with secrets resolved, before anything is
 * written.
 */
import { fileInstaller, type Installer } from '@fleet/core/plugin';
import { DOMAIN, starshipDomain } from './domain.js';
import { tomlProblems } from './toml.js';

/** Makes the domain's installer (the registry loads it lazily through `register.ts`). */
export function createStarshipInstaller(): Installer {
  return fileInstaller({
    domain: DOMAIN,
    files: starshipDomain.files,
    check: (_file, body, source) => tomlProblems(body, source),
  });
}
