/** What the node-local commands (`fleet token …`) share: the `--home` flag and the token store. */
import { Flags } from '@fleet/core/command';

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

/** The token store under `home` (default: the user's home); loads the controller lazily. */
export async function openStore(home: string | undefined) {
  const { homedir } = await import('node:os');
  const { realpath } = await import('node:fs/promises');
  const { TokenStore, statePaths, systemClock } = await import('@fleet/controller');
  return new TokenStore(statePaths(await realpath(home ?? homedir())), systemClock);
}
