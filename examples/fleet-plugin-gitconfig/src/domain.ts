/**
 * The gitconfig domain's declaration: plain data, so it crosses the plugin boundary as it is
 * (a user-installed plugin has its own copy of `@fleet/core`; nothing here is a class).
 */
import type { BlockMarkers, DomainDeclaration } from '@fleet/core/plugin';

/** The marker lines around the fleet-managed block (git reads them as comments). */
export const GITCONFIG_MARKERS: BlockMarkers = {
  begin: '# fleet:gitconfig:begin',
  end: '# fleet:gitconfig:end',
};

/** What `fleet init` writes as `domains/gitconfig/gitconfig`: the block's body, a template. */
const EXAMPLE = `# Managed by fleet (domains/gitconfig/gitconfig): edit the repository, not this block.
[user]
\tname = {{ host.git_name }}
\temail = {{ host.git_email }}
[init]
\tdefaultBranch = main
[pull]
\tff = only
`;

/**
 * `~/.gitconfig`, managed by block: only the lines between the markers are fleet's; everything
 * outside them belongs to the host's user and is preserved byte for byte. The canonical file is
 * the block's body (a git-config fragment), rendered per host with `git_name` and `git_email`.
 * No process action is coupled to it: git reads the file afresh on every run.
 */
export const gitconfigDomain = {
  domain: 'gitconfig',
  description: 'the fleet-managed block of ~/.gitconfig (identity and shared git settings)',
  files: [
    {
      id: 'gitconfig',
      path: '~/.gitconfig',
      canonical: 'gitconfig',
      kind: 'block',
      format: 'text',
      markers: GITCONFIG_MARKERS,
    },
  ],
  hostVariables: ['git_name', 'git_email'],
  coupling: { kind: 'none' },
  examples: [{ path: 'gitconfig', content: EXAMPLE }],
} as const satisfies DomainDeclaration;

/** The domain's name, as `fleet.yaml` lists it. */
export const DOMAIN = gitconfigDomain.domain;

/** The id of the domain's prober, unique across every loaded plugin. */
export const IDENTITY_PROBER = 'gitconfig.identity';
