/**
 * The starship domain's declaration: `~/.config/starship.toml` (the starship prompt's
 * configuration), managed whole — the file equals its rendered canonical source,
 * `domains/starship/starship.toml`. Plain data: it crosses the plugin boundary as it is.
 */
import type { DomainDeclaration } from '@fleet/core/plugin';

export const starshipDomain = {
  domain: 'starship',
  description: "the starship prompt's configuration, ~/.config/starship.toml",
  files: [
    {
      id: 'starship',
      path: '~/.config/starship.toml',
      canonical: 'starship.toml',
      kind: 'whole',
      format: 'text',
    },
  ],
  hostVariables: ['starship_symbol'],
  coupling: { kind: 'none' },
  examples: [
    {
      path: 'starship.toml',
      content: [
        '# Managed by fleet (domains/starship/starship.toml): edit the repository, not this file.',
        'add_newline = false',
        '',
        '[character]',
        'success_symbol = "[{{ host.starship_symbol }}](bold green)"',
        '',
      ].join('\n'),
    },
  ],
} as const satisfies DomainDeclaration;

/** The domain's name, as `fleet.yaml` lists it. */
export const DOMAIN = starshipDomain.domain;
