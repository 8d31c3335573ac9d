/**
 * What `fleet host add|remove` change on the operator's side: fleet.yaml's host entry and
 * hosts/NAME.yaml (edited as YAML documents, so comments and the order of the rest stay, then
 * checked, written atomically and committed — only those paths), the credentials file (contract
 * §3: 0600 in a 0700 directory, made when there is none) and the recovery key pair.
 */
import { existsSync } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as core from '@fleet/core';
import type { HostEntry } from '@fleet/core';
import { writeFileAtomic } from '../fs/atomic.js';
import type { LoadedArtifact } from '../runtime/artifact.js';

const HOSTS_DIR = 'hosts';

/** Refuses when `paths` have uncommitted changes: the commit would take them along. */
export async function requireCommitted(root: string, paths: readonly string[]): Promise<void> {
  const git = core.createGit(root);
  const status = await git.run(['status', '--porcelain=v1', '--', ...paths]);
  if (status.stdout.trim() !== '') {
    throw new core.FleetError(
      'REPO_DIRTY',
      `${paths.join(' and ')} ${paths.length > 1 ? 'have' : 'has'} uncommitted changes: commit or discard them first (fleet host commits them); nothing was changed`,
    );
  }
}

/**
 * Writes `hosts.<name>` and `hosts/<name>.yaml` (a `node_id` when there is no file) and commits
 * them; `null` when fleet.yaml already says exactly this (nothing written).
 */
export async function commitHostFiles(
  root: string,
  name: string,
  entry: HostEntry,
  artifact: LoadedArtifact,
  existing: HostEntry | undefined,
): Promise<string | null> {
  const manifestPath = join(root, core.MANIFEST_FILE);
  const variables = `${HOSTS_DIR}/${name}.yaml`;
  const text = await readFile(manifestPath, 'utf8');
  const edited = core.manifestWithHost(text, name, entry);
  const parsedEntry = core.parseManifest(edited).hosts[name];
  const unchanged =
    existing !== undefined &&
    core.canonicalJson(existing) === core.canonicalJson(parsedEntry) &&
    existsSync(join(root, variables));
  if (unchanged) return null;
  await requireCommitted(root, [core.MANIFEST_FILE, variables]);
  await writeFileAtomic(manifestPath, edited);
  if (!existsSync(join(root, variables))) {
    await mkdir(join(root, HOSTS_DIR), { recursive: true });
    await writeFileAtomic(join(root, variables), `node_id: ${name}\n`);
  }
  const git = core.createGit(root);
  await git.run(['add', '--', core.MANIFEST_FILE, variables]);
  await git.run([
    ...(await core.identityArgs(git)),
    'commit',
    '--quiet',
    '-m',
    `host add ${name}: ${entry.controller}`,
    '-m',
    [
      `controller  ${entry.controller}`,
      `tls         ${entry.tls?.fingerprint ?? 'none'}`,
      `ssh         ${entry.ssh?.user}@${entry.ssh?.host}:${entry.ssh?.port} (${entry.ssh?.hostKey.split(' ')[0]})`,
      `runtime     ${artifact.identity.version} ${artifact.identity.sha256}`,
      `domains     ${entry.domains.join(', ')}`,
    ].join('\n'),
    '--',
    core.MANIFEST_FILE,
    variables,
  ]);
  return (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
}

/**
 * Removes `hosts.<name>` and `hosts/<name>.yaml` (a file for an undeclared host makes the
 * repository invalid; git history keeps both) and commits.
 */
export async function commitHostRemoval(root: string, name: string): Promise<string> {
  const manifestPath = join(root, core.MANIFEST_FILE);
  const variables = `${HOSTS_DIR}/${name}.yaml`;
  await requireCommitted(root, [core.MANIFEST_FILE, variables]);
  const edited = core.manifestWithHost(await readFile(manifestPath, 'utf8'), name, null);
  await writeFileAtomic(manifestPath, edited);
  const git = core.createGit(root);
  await git.run(['rm', '--quiet', '--ignore-unmatch', '--', variables]);
  await git.run(['add', '--', core.MANIFEST_FILE]);
  await git.run([
    ...(await core.identityArgs(git)),
    'commit',
    '--quiet',
    '-m',
    `host remove ${name}`,
    '--',
    core.MANIFEST_FILE,
    variables,
  ]);
  return (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
}

/** The credentials file's path, made (`{ version: 1, hosts: {} }`, 0600, dir 0700) if absent. */
export async function ensureCredentialsFile(): Promise<string> {
  const path = core.defaultCredentialsPath(process.env);
  if (existsSync(path)) return path;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const handle = await open(path, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') return null;
    throw error;
  });
  if (handle === null) return path;
  try {
    await handle.writeFile(`${JSON.stringify({ version: 1, hosts: {} }, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return path;
}

/**
 * The operator's recovery key (contract §12: the key whose authorized_keys line forces `fleet
 * bootstrap receive`): `~/.config/fleet/recovery_ed25519`, made with ssh-keygen when absent.
 * A key of its own, because a forced command binds a key, and the operator's login key must stay
 * a login key.
 */
export async function ensureRecoveryKey(): Promise<{ privateKeyFile: string; publicKey: string }> {
  const dir = dirname(core.defaultCredentialsPath(process.env));
  const privateKeyFile = join(dir, 'recovery_ed25519');
  await core.ensureSshKey(privateKeyFile, 'fleet-recovery');
  const publicKey = (await readFile(`${privateKeyFile}.pub`, 'utf8')).trim();
  return { privateKeyFile, publicKey };
}
