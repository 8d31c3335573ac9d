/**
 * `fleet init`: a new fleet repository — fleet.yaml, one example host, every registered domain's
 * example canonical files, and a first commit. The target must not exist or be empty: init never
 * writes over anything.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { FleetError } from '../errors.js';
import { createGit, identityArgs } from '../git.js';
import type { DomainDeclaration } from '../interfaces/domain.js';
import { parseRepoPath } from '../paths.js';
import { DOMAINS_DIR, HOSTS_DIR, MANIFEST_FILE, parseManifest } from './load.js';
import { yamlLibrary } from '../yaml.js';
import { REPORT_IGNORE_LINES } from '../report/report-dir.js';

const stringify = (value: unknown): string => yamlLibrary().stringify(value);

export interface ScaffoldOptions {
  readonly dir: string;
  /** Registered domains; those with example files are enabled on the example host. */
  readonly domains: readonly DomainDeclaration[];
  /** The example host's name (default `node-01`); `null`: no host (they come from `fleet host add`). */
  readonly exampleHost?: string | null;
}

export interface ScaffoldResult {
  readonly root: string;
  readonly files: readonly string[];
  readonly commit: string;
}

const README = `# fleet repository

The desired state of a fleet, reconciled by \`fleet\` (see \`fleet --help\`).

- \`fleet.yaml\` — the hosts, their controllers and domains, the canonical runtime version.
- \`hosts/<host>.yaml\` — per-host variables (never secrets).
- \`domains/<domain>/\` — canonical files; \`{{ host.NAME }}\` and \`{{ secret.NAME }}\` are the only
  placeholders.
- \`mirror/<host>/<domain>/\` — files adopted from hosts (\`fleet config adopt\`).
- \`reports/\` — dated drift and version reports (git-ignored: commit one with \`git add -f\`).

Check it with \`fleet validate\`.
`;

/** The example fleet.yaml text, built from the registered domains. */
export function exampleManifest(host: string | null, domains: readonly string[]): string {
  const manifest = {
    apiVersion: 'fleet/v1',
    canonicalVersion: '0.1.0',
    hosts:
      host === null
        ? {}
        : {
            [host]: {
              controller: 'http://127.0.0.1:7701',
              platform: 'linux',
              supervisor: 'systemd-user',
              upgrade: { strategy: 'tarball' },
              domains,
              probes: { tools: ['node', 'git'] },
            },
          },
    domains: Object.fromEntries(domains.map((domain) => [domain, { unattended: 'deny' }])),
  };
  const text = `# fleet manifest: see the fleet README for every field.\n${stringify(manifest)}`;
  parseManifest(text); // what init writes must itself validate
  return text;
}

/** Host variables the example host needs: every variable a domain allows, with a sample value. */
function exampleVariables(
  host: string,
  domains: readonly DomainDeclaration[],
): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const declaration of domains) {
    for (const name of declaration.hostVariables) {
      const pathFile = [...declaration.files, ...(declaration.derivedPaths ?? [])].find(
        (file) => file.pathVariable === name,
      );
      if (pathFile) continue; // path overrides are optional: the declared default applies
      variables[name] = name === 'node_id' ? host : `${host}-${name.replace(/_/g, '-')}`;
    }
  }
  return variables;
}

async function isEmptyOrAbsent(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return false; // a file is in the way
    throw error;
  }
}

export async function scaffoldFleetRepo(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const root = resolve(options.dir);
  const host = options.exampleHost === undefined ? 'node-01' : options.exampleHost;
  if (!(await isEmptyOrAbsent(root))) {
    throw new FleetError(
      'INIT_TARGET_NOT_EMPTY',
      `${root} is not empty: fleet init writes only into a new or empty directory`,
    );
  }
  const withExamples = options.domains.filter((d) => (d.examples ?? []).length > 0);
  const files = new Map<string, string>();
  files.set(
    MANIFEST_FILE,
    exampleManifest(
      host,
      withExamples.map((d) => d.domain),
    ),
  );
  if (host !== null) {
    files.set(`${HOSTS_DIR}/${host}.yaml`, stringify(exampleVariables(host, withExamples)));
  } else files.set(`${HOSTS_DIR}/.gitkeep`, '');
  files.set('README.md', README);
  for (const declaration of withExamples) {
    for (const example of declaration.examples ?? []) {
      const path = `${DOMAINS_DIR}/${declaration.domain}/${example.path}`;
      parseRepoPath(path);
      files.set(path, example.content);
    }
  }
  for (const dir of ['mirror', 'reports']) files.set(`${dir}/.gitkeep`, '');
  // What a schedule writes is evidence, not desired state: never the operator's own change.
  files.set(
    '.gitignore',
    `# fleet schedule: reports and runs.log (docs/scheduled-reports.md)\n${REPORT_IGNORE_LINES.join('\n')}\n`,
  );

  for (const [path, content] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content, { flag: 'wx' });
  }
  const git = createGit(root);
  await git.run(['init', '--quiet', '--initial-branch=main']);
  await git.run(['add', '--all']);
  await git.run([...(await identityArgs(git)), 'commit', '--quiet', '-m', 'fleet init']);
  const commit = (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
  return { root, files: [...files.keys()].sort(), commit };
}
