/**
 * The reusable installer for `whole` files with `coupling: none` (contract §6): the desired view of a
 * file is its rendered canonical source as it is, and the node half writes every requested file
 * through the controller's {@link SafeFileWriter} — compare-and-swap, backup, atomic durable
 * replace — then verifies by reading each file back and comparing its sha256.
 *
 * It is the base for any domain whose files are whole files with no process action: such a
 * domain's registration can say `load: async () => wholeFileInstaller('<domain>')`. A domain with
 * `block` files or a process coupling needs its own installer (it may still delegate the writes
 * here and add its actions after).
 */
import { FleetError } from '../errors.js';
import type {
  Installer,
  NodeInstallRequest,
  NodeInstallResult,
  ReplaceResult,
  SafeFileWriter,
} from '../interfaces/installer.js';
import type { NodeContext } from '../interfaces/node-context.js';
import { resolveSecrets } from '../secrets/env-chain.js';

async function restoreAll(
  writer: SafeFileWriter,
  results: readonly ReplaceResult[],
): Promise<void> {
  for (const result of [...results].reverse()) await writer.restore(result);
}

/** An {@link Installer} for whole files without coupled actions. */
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
      if (request.domain !== domain) {
        throw new FleetError(
          'BAD_REQUEST',
          `installer for ${domain} was asked to install domain ${request.domain}`,
        );
      }
      // Every secret is resolved before the first write: a missing one changes nothing.
      const secrets = await ctx.secrets();
      const resolved = request.files.map((file) => ({
        file,
        bytes: new TextEncoder().encode(resolveSecrets(file.content, secrets, file.path)),
      }));
      const results: ReplaceResult[] = [];
      try {
        for (const { file, bytes } of resolved) {
          results.push(
            await writer.replace({
              path: file.path,
              expectedSha256: file.expectedSha256,
              content: bytes,
            }),
          );
        }
        for (const result of results) {
          // Read back through the writer: the same path checks as the write (a managed file
          // linked into a `symlinkInto` directory is read at its target).
          const live = (await writer.read(result.path))?.sha256 ?? null;
          if (live !== result.afterSha256) {
            throw new FleetError(
              'VERIFICATION_FAILED',
              `${result.path} reads back as ${live ?? 'missing'}, not the ${result.afterSha256} just written`,
            );
          }
        }
      } catch (error) {
        await restoreAll(writer, results);
        throw error;
      }
      return { files: results, actions: [], verified: true };
    },
  };
}
