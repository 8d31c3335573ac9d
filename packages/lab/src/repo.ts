/**
 * The lab's fleet repository: what `fleet init` makes (core's `scaffoldFleetRepo`), then every
 * lab host declared with its real controller URL, then a short history of the example domain
 * files — so history-aware drift (contract §8.2) has published versions to recognise: a live file
 * equal to an older version is `stale`, not `diverged`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DomainDeclaration } from '@fleet/core';
import * as core from '@fleet/core';
import { manifestRoles, type LabNodeActions } from './node-actions.js';

export interface LabRepoHost {
  readonly name: string;
  readonly controller: string;
  readonly nodeId: string;
}

export interface LabRepoResult {
  readonly root: string;
  /** Commit hashes, oldest first. */
  readonly commits: readonly string[];
}

const POLICY = 'domains/harness-policy/CLAUDE.md';
const ROUTER = 'domains/router/router.yaml';
const POLICY_END = '<!-- fleet:harness-policy:end -->';

/** Each step of the published history: a message and the edits it makes to the example files. */
const HISTORY: readonly { message: string; edits: Record<string, (text: string) => string> }[] = [
  {
    message: 'policy: run the tests before review; router: connect and read timeouts',
    edits: {
      [POLICY]: (text) => insertPolicyLine(text, '- Run the test suite before asking for review.'),
      [ROUTER]: (text) => `${withNewline(text)}timeouts:\n  connect: 5s\n  read: 30s\n`,
    },
  },
  {
    message: 'policy: adopt rather than hand-edit; router: a faster connect timeout',
    edits: {
      [POLICY]: (text) =>
        insertPolicyLine(
          text,
          "- Change a host's configuration through the fleet repository, never by hand.",
        ),
      [ROUTER]: (text) => text.replace('  connect: 5s\n', '  connect: 2s\n'),
    },
  },
];

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** Adds a line at the end of the policy block (or of the file, when it has no block). */
function insertPolicyLine(text: string, line: string): string {
  const at = text.indexOf(POLICY_END);
  return at === -1
    ? `${withNewline(text)}${line}\n`
    : `${text.slice(0, at)}${line}\n${text.slice(at)}`;
}

function quote(value: string): string {
  return JSON.stringify(value); // a JSON string is a YAML string
}

/** Host variables of a lab host: `node_id`, and a sample value for any other variable a domain requires. */
function labVariables(
  host: LabRepoHost,
  domains: readonly DomainDeclaration[],
): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const declaration of domains) {
    for (const name of declaration.hostVariables) {
      const isPath = [...declaration.files, ...(declaration.derivedPaths ?? [])].some(
        (f) => f.pathVariable === name,
      );
      if (isPath) continue; // path overrides are optional: the declared default applies
      variables[name] =
        name === 'node_id' ? host.nodeId : `${host.name}-${name.replace(/_/g, '-')}`;
    }
  }
  return variables;
}

function manifestText(
  hosts: readonly LabRepoHost[],
  domains: readonly string[],
  canonicalVersion: string,
  supervisor: 'lab' | 'systemd-user',
  signingKey: string | undefined,
  nodeActions: LabNodeActions | undefined,
): string {
  const platform =
    process.platform === 'darwin' || process.platform === 'win32' ? process.platform : 'linux';
  const lines = [
    '# fleet manifest of a lab fleet (`fleet lab up`): every host is a controller on 127.0.0.1',
    supervisor === 'lab'
      ? '# under a lab supervisor, with its own home in the lab directory.'
      : "# run as a unit of the user's systemd --user manager, with its own home in the lab directory.",
    'apiVersion: fleet/v1',
    `canonicalVersion: ${canonicalVersion}`,
    'hosts:',
  ];
  for (const host of hosts) {
    lines.push(
      `  ${host.name}:`,
      `    controller: ${quote(host.controller)}`,
      `    platform: ${platform}`,
      `    supervisor: ${supervisor}`,
      '    upgrade: { strategy: tarball }',
      `    domains: [${domains.join(', ')}]`,
      '    probes: { tools: [node, git] }',
    );
  }
  lines.push('domains:');
  // The roles `--node-actions` gives a domain's node policy actions (node-actions.ts).
  for (const domain of domains) {
    lines.push(`  ${domain}: { unattended: deny${manifestRoles(nodeActions, domain)} }`);
  }
  // The lab's release signing key: what its nodes trust and `fleet lab build` signs with.
  if (signingKey !== undefined) lines.push('signing:', `  keys: [${quote(signingKey)}]`);
  return `${lines.join('\n')}\n`;
}

export async function buildLabRepo(options: {
  readonly root: string;
  readonly hosts: readonly LabRepoHost[];
  readonly domains: readonly DomainDeclaration[];
  /** What runs the hosts' controllers (fleet.yaml `supervisor:`; default the lab supervisor). */
  readonly supervisor?: 'lab' | 'systemd-user';
  /** The lab's release signing key (`ssh-ed25519 AAAA…`), for fleet.yaml's `signing.keys`. */
  readonly signingKey?: string;
  /** `fleet lab up --node-actions`: the roles fleet.yaml names (node-actions.ts). */
  readonly nodeActions?: LabNodeActions;
}): Promise<LabRepoResult> {
  const { root, hosts } = options;
  const withExamples = options.domains.filter((d) => (d.examples ?? []).length > 0);
  const scaffold = await core.scaffoldFleetRepo({
    dir: root,
    domains: withExamples,
    exampleHost: hosts[0]?.name ?? 'node-01',
  });
  const git = core.createGit(root);
  const identity = await core.identityArgs(git);
  const commits = [scaffold.commit];
  const commit = async (message: string): Promise<void> => {
    await git.run(['add', '--all']);
    await git.run([...identity, 'commit', '--quiet', '-m', message]);
    commits.push((await git.run(['rev-parse', 'HEAD'])).stdout.trim());
  };

  const { canonicalVersion } = core.parseManifest(
    await readFile(join(root, core.MANIFEST_FILE), 'utf8'),
  );
  const domainNames = withExamples.map((d) => d.domain);
  await writeFile(
    join(root, core.MANIFEST_FILE),
    manifestText(
      hosts,
      domainNames,
      canonicalVersion,
      options.supervisor ?? 'lab',
      options.signingKey,
      options.nodeActions,
    ),
  );
  for (const host of hosts) {
    const variables = labVariables(host, withExamples);
    const text = Object.entries(variables)
      .map(([name, value]) => `${name}: ${quote(value)}\n`)
      .join('');
    await mkdir(join(root, core.HOSTS_DIR), { recursive: true });
    await writeFile(join(root, core.HOSTS_DIR, `${host.name}.yaml`), text);
  }
  await commit(`lab: ${hosts.length} host${hosts.length === 1 ? '' : 's'} on 127.0.0.1`);

  await makeHistory(root, commit);
  await validateLabRepo(root, withExamples);
  return { root, commits };
}

/** HISTORY's edits, each step one commit, to the files the loaded domains scaffolded. */
async function makeHistory(
  root: string,
  commit: (message: string) => Promise<void>,
): Promise<void> {
  for (const step of HISTORY) {
    let changed = false;
    for (const [path, edit] of Object.entries(step.edits)) {
      const file = join(root, ...path.split('/'));
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        continue; // that domain is not loaded: its file has no history to make
      }
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, edit(text));
      changed = true;
    }
    if (changed) await commit(step.message);
  }
}

/** What the lab hands the operator must itself be valid: every file renders for every host. */
async function validateLabRepo(root: string, domains: readonly DomainDeclaration[]): Promise<void> {
  const repo = await core.loadRepo(root);
  const report = core.validateRepo({
    repo,
    domains: new Map(domains.map((d) => [d.domain, d])),
    readCanonical: (path) => core.readRepoFile(root, path),
  });
  if (report.problems.length > 0) {
    throw new core.FleetError('REPO_INVALID', `the lab repository at ${root} does not validate`, {
      problems: report.problems,
    });
  }
}
