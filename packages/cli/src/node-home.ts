/** What the node-local commands (`fleet token …`) share: the `--home` flag and the token store. */
import { Flags } from '@oclif/core';

export const homeFlag = Flags.directory({
  description: "the node's home whose token store to use (default: your home directory)",
  exists: true,
});

/** The token store under `home` (default: the user's home); loads the controller lazily. */
export async function openStore(home: string | undefined) {
  const { homedir } = await import('node:os');
  const { realpath } = await import('node:fs/promises');
  const { TokenStore, statePaths, systemClock } = await import('@fleet/controller');
  return new TokenStore(statePaths(await realpath(home ?? homedir())), systemClock);
}
