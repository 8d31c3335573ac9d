/**
 * fleet's own files on a node (contract §5, §5.1): its state, its runtime generations, the
 * env-file chain, the node policy and the operator's credentials. None of them can ever be a
 * domain's path — a plugin declaring one is refused at registration, a node policy listing one is
 * invalid, and the node refuses one at every read and write — so a write credential can never
 * rewrite the rules that bound it (tokens, audit log, policy) or read back the secrets.
 *
 * Compared folded (policy/fold.ts: full Unicode case folding, NFKC): on macOS and Windows
 * `~/.Config/Fleet/env` and `~/.config/fleet/credentialſ.json` may be fleet's files. A path with an
 * 8.3 short-name component (`~/CONFIG~1/fleet/…`) may alias any of them and counts as fleet's.
 */
import { isShortNameForm, parseHomePath } from '../paths.js';
import { foldPath } from './fold.js';

/** Directories whose whole tree is fleet's (`~/`-relative, no trailing slash). */
export const FLEET_OWN_DIRS: readonly string[] = [
  '~/.local/state/fleet',
  '~/.local/share/fleet',
  '~/.config/fleet/env.d',
  // Windows keeps the node's state and runtime under %LOCALAPPDATA%\fleet (contract §5).
  '~/AppData/Local/fleet',
];

/** Single files that are fleet's. */
export const FLEET_OWN_FILES: readonly string[] = [
  '~/.config/fleet/env',
  '~/.config/fleet/node-policy.yaml',
  '~/.config/fleet/credentials.json',
];

let folded: { readonly files: readonly string[]; readonly dirs: readonly string[] } | undefined;

/** The lists above, folded once (on first use: no start-up cost for a verb that never asks). */
function foldedLists(): NonNullable<typeof folded> {
  folded ??= { files: FLEET_OWN_FILES.map(foldPath), dirs: FLEET_OWN_DIRS.map(foldPath) };
  return folded;
}

/**
 * True when `path` (a `~/` path, or a `~/` prefix of one) is fleet's own file or lies in one of
 * fleet's own directories — or is such a directory itself.
 */
export function isFleetOwnPath(path: string): boolean {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed.split('/').some(isShortNameForm)) return true;
  const key = foldPath(trimmed);
  const { files, dirs } = foldedLists();
  if (files.includes(key)) return true;
  return dirs.some((dir) => key === dir || key.startsWith(`${dir}/`));
}

/** One line for an error: why the path is refused. */
export function fleetOwnReason(path: string): string {
  let shown = path;
  try {
    shown = `~/${parseHomePath(path).join('/')}`;
  } catch {
    // shown as given
  }
  return `${shown} is fleet's own state (~/.local/state/fleet/, ~/.local/share/fleet/, the env files, the node policy or the credentials): it can never be a domain's path`;
}
