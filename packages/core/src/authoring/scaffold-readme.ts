/**
 * The README `fleet plugins new` writes (plugin-scaffold.ts): the shortest path of
 * docs/plugin-authoring.md as the author runs it in the plugin's folder. The e2e suite
 * (test/e2e/plugin-scaffold.test.ts) runs its inline `fleet config …` commands against a lab node.
 */
import { ownerVariable, type Template } from './scaffold-template.js';

export function readme(t: Template): string {
  return `# ${t.name}

A fleet domain plugin: the domain \`${t.domain}\` manages ${
    t.kind === 'block'
      ? `the fleet-managed block of \`${t.path}\` (the lines between \`${t.comment} fleet:${t.domain}:begin\` and \`${t.comment} fleet:${t.domain}:end\`; every other line stays the host user's)`
      : `\`${t.path}\` as a whole file`
  }. Written by \`fleet plugins new\`.

\`\`\`sh
npm install        # @fleet/core and @fleet/testkit from the registry in .npmrc (or offline: docs/plugin-authoring.md)
npm test           # builds; the registration and the installer on @fleet/testkit fake hosts, then
                   # the acceptance cycle on a lab node (with the fleet CLI: $FLEET_BIN or on PATH)
fleet plugins link .
eval "$(fleet lab up --hosts 1)"   # a lab in .fleet-lab/ whose node serves this folder's build
fleet config plan node-01 ${t.domain}   # the lab's node serves it: what an install would do
fleet config install node-01 ${t.domain} --confirm
npm run build && fleet lab restart # after a change: the lab's node loads the new build
fleet lab down
\`\`\`

Offline (no registry in .npmrc): \`npm install --no-save --fetch-retries=0 ~/fleet-tgz/fleet-*.tgz\`
instead of \`npm install\`, and \`fleet plugins link . --no-install\` (that install writes no lockfile).
The modules in \`src/\` import \`@fleet/core/plugin\`, the plugin API; the tests also use
\`@fleet/core\` (the operator's render) and \`@fleet/testkit\`.

A coupled action — your tool checking the new file before it replaces the old, a reload, a
restart — needs no code: fleet.yaml names a role (\`domains: { ${t.domain}: { validate: ID } }\`,
or \`reload\`, \`restart\`) and each node's policy says what \`ID\` runs (\`domains: { ${t.domain}:
{ actions: { ID: { argv: [/usr/bin/TOOL, '{file}'] } } } }\`). A lab writes both when it starts:
\`fleet lab up --hosts 1 --node-actions FILE\`, FILE holding \`${t.domain}: { actions: { ID: { argv:
[/usr/bin/TOOL, '{file}'] } }, validate: ID }\`; \`test/acceptance.test.ts\` gives the acceptance
cycle one (\`nodeActions\`). docs/plugin-authoring.md, "A coupled action on the lab node".

In your fleet repository — \`fleet plugins new … --wire --repo DIR --host HOST\` already did the
first three: list \`${t.domain}\` in a host's \`domains\` and under \`domains\` in fleet.yaml, write
\`domains/${t.domain}/${t.domain}\` (the canonical source, a template: \`{{ host.NAME }}\`,
\`{{ secret.NAME }}\`), set \`${ownerVariable(t.domain)}\` in \`hosts/HOST.yaml\`, and commit. A
lab brought up after \`fleet plugins link\` does all of that itself, and its nodes serve the domain
from this folder (lab only). A real node serves it once its runtime carries the plugin
(docs/plugin-authoring.md, "Linking and installing") and its node policy lists it (\`domains: { ${t.domain}: {} }\` in
~/.config/fleet/node-policy.yaml). Then \`fleet config plan HOST ${t.domain}\` and
\`fleet config install HOST ${t.domain} --confirm\`.

Where to go next: \`src/installer.ts\` (a syntax check of your file's content), \`src/domain.ts\`
(host variables, more files), and fleet's docs/plugin-authoring.md (probers, coupled actions).
`;
}
