/**
 * `fleet plugins new` (docs/plugin-authoring.md, "Start from fleet plugins new"): writes a new
 * domain plugin package and, with `wire`, wires its domain into a fleet repository — fleet.yaml
 * declares it and lists it on the chosen hosts, `domains/<domain>/<domain>` holds the example
 * canonical source, each host's variables file the example's host variable — committed, only
 * those paths, like `fleet host add`. What the nodes need (their node policy) is theirs to write:
 * the result carries the lines to add (contract §5.1, "the node decides").
 *
 * Everything is checked before anything is written: the repository's paths committed, the hosts
 * known, the domain new to fleet.yaml, the package's folder new or empty.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as core from '@fleet/core';
import type { PluginScaffold, PluginScaffoldOptions } from '@fleet/core';
import { writeFileAtomic } from '../fs/atomic.js';
import { requireCommitted } from '../host/fleet-files.js';

export interface WireOptions {
  /** The fleet repository's root. */
  readonly root: string;
  /** The hosts to list the domain on (default: every host in fleet.yaml). */
  readonly hosts?: readonly string[];
}

export interface NewPluginOptions {
  /** Where to write the package: a new or empty folder. */
  readonly dir: string;
  readonly scaffold: PluginScaffoldOptions;
  readonly wire?: WireOptions;
}

export interface WiredDomain {
  readonly repo: string;
  readonly hosts: readonly string[];
  /** The paths changed in the repository, committed. */
  readonly paths: readonly string[];
  readonly commit: string;
  /** What each node's ~/.config/fleet/node-policy.yaml needs for the domain to be served. */
  readonly nodePolicy: string;
}

export interface NewPluginResult extends PluginScaffold {
  readonly root: string;
  readonly wired?: WiredDomain;
}

/** The node-policy lines that let a node serve `domain` at its declared paths (docs/node-policy.md). */
export function nodePolicyLines(domain: string): string {
  return `domains:\n  ${domain}: {}\n`;
}

/** fleet's packed tarballs, where docs/plugin-authoring.md's offline command puts them. */
export const OFFLINE_TARBALLS = '~/fleet-tgz/fleet-*.tgz';

/**
 * What the author types next, as docs/plugin-authoring.md's shortest path writes it. With no
 * registry named, .npmrc binds `@fleet` to a name that never resolves, so a plain `npm install`
 * would fail: the next step is the offline install of fleet's packed tarballs instead, and since
 * that install writes no lockfile, `fleet plugins link --no-install` (a link with a lockfile runs
 * `npm install` again; without one it warns that it found none).
 */
export function nextSteps(root: string, registry: string, unset: string): string[] {
  if (registry !== unset) {
    return [`Next: cd ${root} && npm install && npm test && fleet plugins link .`];
  }
  return [
    `No --registry: @fleet is bound to ${registry} in .npmrc, which resolves nowhere, so a plain npm install fails. Name your registry there, or install fleet's packed tarballs (${OFFLINE_TARBALLS}: npm pack -w packages/core -w packages/controller -w packages/testkit in a built fleet checkout; docs/plugin-authoring.md, "Installing @fleet/core and @fleet/testkit outside this repository").`,
    `Next: cd ${root} && npm install --no-save --fetch-retries=0 ${OFFLINE_TARBALLS} && npm test && fleet plugins link . --no-install`,
  ];
}

interface WirePlan {
  readonly root: string;
  readonly hosts: readonly string[];
  readonly manifest: string;
  /** Repository-relative path → new content. */
  readonly files: ReadonlyMap<string, string>;
}

async function planWire(wire: WireOptions, scaffold: PluginScaffold): Promise<WirePlan> {
  const manifestPath = join(wire.root, core.MANIFEST_FILE);
  const text = await readFile(manifestPath, 'utf8');
  const hosts = wire.hosts ?? Object.keys(core.parseManifest(text).hosts);
  const manifest = core.manifestWithDomain(text, scaffold.domain, hosts);
  const files = new Map<string, string>();
  const canonical = `${core.DOMAINS_DIR}/${scaffold.domain}/${scaffold.example.path}`;
  core.parseRepoPath(canonical);
  if (existsSync(join(wire.root, canonical))) {
    throw new core.FleetError(
      'USAGE',
      `${canonical} already exists in ${wire.root}: nothing was changed`,
    );
  }
  files.set(canonical, scaffold.example.content);
  for (const host of hosts) {
    const path = `${core.HOSTS_DIR}/${host}.yaml`;
    const current = existsSync(join(wire.root, path))
      ? await readFile(join(wire.root, path), 'utf8')
      : null;
    const sample = `${host}-${scaffold.hostVariable.replace(/_/g, '-')}`;
    const edited = core.hostVariablesWith(current, scaffold.hostVariable, sample);
    if (edited !== current) files.set(path, edited);
  }
  await requireCommitted(wire.root, [core.MANIFEST_FILE, ...files.keys()]);
  return { root: wire.root, hosts, manifest, files };
}

async function commitWire(plan: WirePlan, scaffold: PluginScaffold): Promise<WiredDomain> {
  await writeFileAtomic(join(plan.root, core.MANIFEST_FILE), plan.manifest);
  for (const [path, content] of plan.files) {
    await mkdir(dirname(join(plan.root, path)), { recursive: true });
    await writeFileAtomic(join(plan.root, path), content);
  }
  const paths = [core.MANIFEST_FILE, ...plan.files.keys()];
  const git = core.createGit(plan.root);
  await git.run(['add', '--', ...paths]);
  await git.run([
    ...(await core.identityArgs(git)),
    'commit',
    '--quiet',
    '-m',
    `plugins new ${scaffold.name}: domain ${scaffold.domain}`,
    '-m',
    `hosts ${plan.hosts.join(', ') || 'none'}; example source ${core.DOMAINS_DIR}/${scaffold.domain}/`,
    '--',
    ...paths,
  ]);
  const commit = (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
  return {
    repo: plan.root,
    hosts: plan.hosts,
    paths,
    commit,
    nodePolicy: nodePolicyLines(scaffold.domain),
  };
}

export async function newPlugin(options: NewPluginOptions): Promise<NewPluginResult> {
  const scaffold = core.pluginScaffold(options.scaffold);
  const plan = options.wire === undefined ? undefined : await planWire(options.wire, scaffold);
  const written = await core.writePluginScaffold(options.dir, options.scaffold);
  if (plan === undefined) return written;
  return { ...written, wired: await commitWire(plan, scaffold) };
}
