/**
 * The reusable installer for `whole` files with `coupling: none` (contract §6): the desired view of a
 * file is its rendered canonical source as it is, and the node half writes every requested file
 * through the controller's {@link SafeFileWriter} — compare-and-swap, backup, atomic durable
 * replace — then verifies by reading each file back and comparing its sha256.
 *
 * It is the base for any domain whose files are whole files: such a domain's registration can say
 * `load: async () => wholeFileInstaller('<domain>')`. The request's role actions (`validate` on
 * each staged file, `reload` and `restart` after the writes, ids of the node's own policy) run as
 * `fileInstaller` runs them (`file-actions.ts`).
 */
import { FleetError } from '../errors.js';
import type {
  Installer,
  NodeInstallRequest,
  NodeInstallResult,
  SafeFileWriter,
} from '../interfaces/installer.js';
import type { NodeContext } from '../interfaces/node-context.js';
import { resolveSecrets } from '../secrets/env-chain.js';
import {
  requireFileActions,
  requireValidated,
  runFileActions,
  withValidation,
} from './file-actions.js';
import { requireDomain } from './request-guards.js';
import { writeVerified } from './transaction.js';

/** An {@link Installer} for whole files, running the role actions a request names (`file-actions.ts`). */
export function wholeFileInstaller(domain: string): Installer {
  return {
    domain,
    view: (_file, renderedCanonical) => renderedCanonical,
    managed: (_file, live) => live,
    async install(
      ctx: NodeContext,
      request: NodeInstallRequest,
      writer: SafeFileWriter,
    ): Promise<NodeInstallResult> {
      requireDomain(request, domain);
      if (request.files.some((f) => f.mode !== undefined || f.action !== undefined)) {
        throw new FleetError(
          'BAD_REQUEST',
          `${domain}: a request cannot give its declared files a mode or an action`,
        );
      }
      // Every action is the node policy's and every secret resolves before the first write: a
      // missing one changes nothing.
      const roles = request.actions ?? {};
      requireFileActions(ctx, domain, [], roles);
      const secrets = await ctx.secrets();
      const validation = withValidation(
        ctx,
        roles,
        request.files.map((file) => ({
          path: file.path,
          expectedSha256: file.expectedSha256,
          content: new TextEncoder().encode(resolveSecrets(file.content, secrets, file.path)),
        })),
      );
      const results = await writeVerified(writer, validation.writes);
      await requireValidated(roles, results, validation.checked, writer);
      // Reload and restart, once, when a file changed; a failure restores every file.
      const actions = await runFileActions(
        ctx,
        request.files,
        results,
        writer,
        roles,
        validation.outcomes,
      );
      return { files: results, actions, verified: true };
    },
  };
}
