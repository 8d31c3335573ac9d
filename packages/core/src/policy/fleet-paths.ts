/**
 * fleet's own files on a node (contract §5, §5.1): its state, its runtime generations, the
 * env-file chain, the node policy and the operator's credentials. None of them can ever be a
 * domain's path — a plugin declaring one is refused at registration, a node policy listing one is
 * invalid, and the node refuses one at every read and write — so a write credential can never
 * rewrite the rules that bound it (tokens, audit log, policy) or read back the secrets.
 *
 * Compared case-insensitively: on macOS and Windows `~/.Config/Fleet/env` is the same file.
 */
import { parseHomePath } from '../paths.js';

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

function fold(path: string): string {
  return path.toLowerCase();
}

/**
 * True when `path` (a `~/` path, or a `~/` prefix of one) is fleet's own file or lies in one of
 * fleet's own directories — or is such a directory itself.
 */
export function isFleetOwnPath(path: string): boolean {
  const folded = fold(path.replace(/\/+$/, ''));
  if (FLEET_OWN_FILES.some((file) => fold(file) === folded)) return true;
  return FLEET_OWN_DIRS.some((dir) => {
    const d = fold(dir);
    return folded === d || folded.startsWith(`${d}/`);
  });
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
