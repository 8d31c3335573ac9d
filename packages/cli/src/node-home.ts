/**
 * What the token commands (`fleet token …`) share: the `--home`, `--host` and `--timeout` flags and
 * the target they name for the token service.
 */
import { Flags } from '@fleet/core/command';
import type { TokenTarget } from '@fleet/operator/token';

export const homeFlag = Flags.directory({
  description: "the node's home whose token store to use (default: your home directory)",
  exists: true,
  exclusive: ['host'],
});

/** `--host H`: the same verb from the operator seat, through H's controller (node-admin:tokens). */
export const hostFlag = Flags.string({
  description:
    "a host of fleet.yaml: administer its tokens through its controller (needs node-admin:tokens), with your credentials file's token for it",
  exclusive: ['home'],
});

export const timeoutFlag = Flags.integer({
  description: 'with --host: the request timeout in milliseconds',
  default: 15_000,
  min: 1,
});

/**
 * The token service's target: the host's controller with `--host` (the repository found from
 * `--repo`), else the node's own token store under `--home`.
 */
export async function tokenTarget(
  flags: {
    readonly repo?: string;
    readonly home?: string;
    readonly host?: string;
    readonly timeout: number;
  },
  findRepo: (flag: string | undefined) => Promise<string>,
): Promise<TokenTarget> {
  if (flags.host === undefined) return flags.home === undefined ? {} : { home: flags.home };
  return { host: flags.host, root: await findRepo(flags.repo), timeoutMs: flags.timeout };
}
