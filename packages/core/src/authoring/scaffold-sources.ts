/**
 * The source files `fleet plugins new` writes into a new plugin's `src/` (plugin-scaffold.ts): the
 * domain's declaration, its `fleet:register` hook, its installer and adopter on core's public
 * helpers, and the index the tests import — each a function of the template's values, so the
 * scaffold stays pure. Beside the tests (scaffold-tests.ts) and the README (scaffold-readme.ts)
 * it writes.
 */
import { camel, exampleCanonical, pascal, type Template } from './scaffold-template.js';

export function indexTs(t: Template): string {
  return `/**
 * ${t.name}: a fleet domain plugin. fleet loads it through its \`fleet:register\` hook
 * (\`register.ts\`); these exports are for tests.
 */
export { DOMAIN, ${camel(t.domain)}Domain } from './domain.js';
export { registration } from './register.js';
export { create${pascal(t.domain)}Installer } from './installer.js';
export { create${pascal(t.domain)}Adopter } from './adopter.js';
`;
}

export function domainTs(t: Template): string {
  const block =
    t.kind === 'block'
      ? `\n      markers: { begin: '${t.comment} fleet:${t.domain}:begin', end: '${t.comment} fleet:${t.domain}:end' },`
      : '';
  const what =
    t.kind === 'block'
      ? `only the lines between the markers are fleet's; everything outside them belongs to the host's\n * user and is preserved byte for byte. The canonical source is the block's body`
      : `the file equals its canonical source`;
  return `/**
 * The ${t.domain} domain's declaration: plain data, so it crosses the plugin boundary as it is.
 * \`${t.path}\`, managed ${t.kind === 'block' ? 'by block' : 'whole'}: ${what}, a template rendered
 * per host (\`{{ host.${t.domain.replace(/-/g, '_')}_owner }}\` below is a host variable, declared in
 * \`hostVariables\`). No process action is coupled to it by the plugin (\`coupling: none\`); a role
 * fleet.yaml names for the domain (validate, reload, restart) still runs the node policy's action
 * through \`fileInstaller\` (docs/plugin-authoring.md §7, "Role actions").
 */
import type { DomainDeclaration } from '@fleet/core/plugin';

/** What \`fleet init\` writes as \`domains/${t.domain}/${t.domain}\`: an example canonical source. */
const EXAMPLE = ${JSON.stringify(exampleCanonical(t))};

export const ${camel(t.domain)}Domain = {
  domain: '${t.domain}',
  description: '${t.kind === 'block' ? `the fleet-managed block of ${t.path}` : t.path}',
  files: [
    {
      id: '${t.domain}',
      path: '${t.path}',
      canonical: '${t.domain}',
      kind: '${t.kind}',
      format: 'text',${block}
    },
  ],
  hostVariables: ['${t.domain.replace(/-/g, '_')}_owner'],
  coupling: { kind: 'none' },
  examples: [{ path: '${t.domain}', content: EXAMPLE }],
} as const satisfies DomainDeclaration;

/** The domain's name, as \`fleet.yaml\` lists it. */
export const DOMAIN = ${camel(t.domain)}Domain.domain;
`;
}

export function registerTs(t: Template): string {
  const d = camel(t.domain);
  return `/**
 * The plugin's \`fleet:register\` hook (package.json \`oclif.hooks["fleet:register"]\`): plain
 * descriptors built with \`defineRegistration\`; the implementations load lazily, only when a
 * command (or a node's controller) needs them.
 */
import { defineRegistration, type FleetRegistration, type RegisterHookOptions } from '@fleet/core/plugin';
import { ${d}Domain } from './domain.js';

export const registration: FleetRegistration = defineRegistration({
  installers: [
    {
      ...${d}Domain,
      load: () => import('./installer.js').then((m) => m.create${pascal(t.domain)}Installer()),
    },
  ],
  adopters: [
    {
      domain: ${d}Domain.domain,
      load: () => import('./adopter.js').then((m) => m.create${pascal(t.domain)}Adopter()),
    },
  ],
});

export default function register(_options: RegisterHookOptions): FleetRegistration {
  return registration;
}
`;
}

export function installerTs(t: Template): string {
  return `/**
 * The ${t.domain} installer: \`@fleet/core/plugin\`'s \`fileInstaller\` — the operator half renders the
 * view${t.kind === 'block' ? " (the block's body)" : ''}, the node half resolves secrets, ${
   t.kind === 'block' ? 'splices the block into the live file, ' : ''
 }writes through the controller's
 * safe writer (compare and swap, backup, atomic replace), reads back and restores on failure.
 *
 * To refuse content your tool could not read, pass \`check: (file, body, source) => problems\`:
 * it runs before planning (a bad canonical is an \`error\` item in \`fleet drift\`) and again on the
 * node with secrets resolved (a problem there: \`RENDER_FAILED\`, nothing written). Problems
 * name lines, never text.
 *
 * Coupled actions need no code here: the role fleet.yaml names (\`validate\`, \`reload\`,
 * \`restart\`: \`VALIDATE_ROLE\`…) runs the node policy's action of that id, \`validate\` on the
 * staged new file before it replaces the old (docs/plugin-authoring.md §7).
 */
import { fileInstaller, type Installer } from '@fleet/core/plugin';
import { DOMAIN, ${camel(t.domain)}Domain } from './domain.js';

export function create${pascal(t.domain)}Installer(): Installer {
  return fileInstaller({ domain: DOMAIN, files: ${camel(t.domain)}Domain.files });
}
`;
}

export function adopterTs(t: Template): string {
  return `/**
 * The ${t.domain} adopter: \`@fleet/core/plugin\`'s \`fileAdopter\` — \`fleet config adopt HOST ${t.path}\`
 * takes ${t.kind === 'block' ? "the block's body (never the user's lines around it)" : 'the live file'}
 * into \`mirror/<host>/${t.domain}/\`; the core reverse-substitutes host variables and scans for
 * secrets first.
 */
import { fileAdopter, type Adopter } from '@fleet/core/plugin';
import { DOMAIN } from './domain.js';

export function create${pascal(t.domain)}Adopter(): Adopter {
  return fileAdopter({ domain: DOMAIN });
}
`;
}
