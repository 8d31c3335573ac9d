import type { DomainDeclaration } from '@fleet/core/plugin';

/** The manifest of the domain, in `domains/files/` of the fleet repository (contract §10.4). */
export const MANIFEST = 'files.yaml';

const EXAMPLE_MANIFEST = `# The files fleet manages on the hosts that run the files domain (contract §10.4).
# Each entry: path (on the node, under ~/), source (beside this file), and kind:
#   whole — the file equals the rendered source;
#   block — only the lines between two markers are fleet's ({mark} becomes BEGIN and END).
# Optional: mode (quoted octal, e.g. "0600"; never group/other-writable) and action (the id of an
# action in each node's own policy, domains.files.actions.<id>, run after the file changes), and
# template: false (the source is copied as it is, braces and all). In a template, {{ "{{" }} is a
# literal {{. A source may be a symbolic link within the repository; an executable one installs 0755.
# A node writes an entry only where its policy's domains.files.patterns match the path.
files:
  - path: ~/.config/fleet-demo/hello.conf
    source: hello.conf
    kind: whole
    mode: "0644"
`;

const EXAMPLE_SOURCE = `# Managed by fleet: edit domains/files/hello.conf in the fleet repository, not here.
greeting = hello from the fleet
`;

/**
 * The files domain (contract §10.4): any file an operator declares in `domains/files/files.yaml`,
 * managed whole or by block, with no plugin to write. It declares no file of its own: its files
 * are the manifest's entries, which the core adds to this declaration at the commit it reads, and
 * each node accepts their paths only where its node policy's `domains.files.patterns` match.
 */
export const filesDomain = {
  domain: 'files',
  description: 'any file declared in domains/files/files.yaml, whole or by block',
  files: [],
  repoManifest: MANIFEST,
  hostVariables: [],
  coupling: { kind: 'none' },
  examples: [
    { path: MANIFEST, content: EXAMPLE_MANIFEST },
    { path: 'hello.conf', content: EXAMPLE_SOURCE },
  ],
} as const satisfies DomainDeclaration;
