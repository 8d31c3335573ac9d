/**
 * The tests `fleet plugins new` writes into a new plugin (plugin-scaffold.ts): the registration
 * and the installer on `@fleet/testkit` fake hosts — they pass as generated, and show an author
 * how to test what they add.
 */
import { camel, pascal, type Template } from './scaffold-template.js';

export function registerTest(t: Template): string {
  return `import { expect } from 'chai';
import { registryFromHooks } from '@fleet/testkit';
import register from '../src/register.js';

// How fleet names this plugin when it is linked (\`fleet plugins link\`).
const plugin = { name: '${t.name}', version: '0.1.0', type: 'link' };

describe('${t.domain} plugin: registration', () => {
  it('is accepted by the core registry with no problems', async () => {
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect(registry.domains().map((d) => d.descriptor.domain)).to.deep.equal(['${t.domain}']);
    const installer = await registry.installer('${t.domain}');
    expect(installer.domain).to.equal('${t.domain}');
  });
});
`;
}

function testPreamble(t: Template): string {
  return `import { expect } from 'chai';
import { renderDomainForHost } from '@fleet/core';
import { isFleetError, type NodeInstallRequest } from '@fleet/core/plugin';
import { createFakeHost, type FakeHost } from '@fleet/testkit';
import { create${pascal(t.domain)}Installer, ${camel(t.domain)}Domain } from '../src/index.js';

const DOMAIN = ${camel(t.domain)}Domain;
const FILE = DOMAIN.files[0];
const PATH = FILE.path;
const CANONICAL = '${t.comment} owner: {{ host.${t.domain.replace(/-/g, '_')}_owner }}\\n${t.comment} token: {{ secret.API_TOKEN }}\\n';

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('${t.domain} plugin: installer', () => {
  const installer = create${pascal(t.domain)}Installer();
  let host: FakeHost;

  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01', secrets: { API_TOKEN: 'canary-0123456789' } });
  });
  afterEach(() => host.dispose());

  /** The operator half, as \`fleet config plan\` computes it: the host's desired view. */
  function desired(): string {
    const variables = { ${t.domain.replace(/-/g, '_')}_owner: 'ops@example.org' };
    const [rendered] = renderDomainForHost(DOMAIN, 'node-01', variables, () => CANONICAL);
    return installer.view(FILE, rendered?.content ?? '', DOMAIN);
  }

  /** The node half, as the controller calls it, planned against the live file as it is now. */
  async function install(content: string) {
    const writer = host.writer(DOMAIN);
    const live = await writer.read(PATH);
    const request: NodeInstallRequest = {
      operationId: '01JTESTOPERATION0000000000',
      domain: DOMAIN.domain,
      files: [{ fileId: FILE.id, path: PATH, expectedSha256: live?.sha256 ?? null, content }],
      parameters: {},
    };
    return installer.install(host, request, writer);
  }
`;
}

export function wholeInstallerTest(t: Template): string {
  return `${testPreamble(t)}
  it('creates the file, with host variables rendered and the secret resolved on the node', async () => {
    const result = await install(desired());
    expect(result.verified).to.equal(true);
    expect(await host.readText(PATH)).to.equal(
      '${t.comment} owner: ops@example.org\\n${t.comment} token: canary-0123456789\\n',
    );
  });

  it('refuses a file that changed since the plan, writing nothing', async () => {
    const view = desired();
    const writer = host.writer(DOMAIN);
    const request: NodeInstallRequest = {
      operationId: '01JTESTOPERATION0000000001',
      domain: DOMAIN.domain,
      files: [{ fileId: FILE.id, path: PATH, expectedSha256: null, content: view }],
      parameters: {},
    };
    await host.writeFile(PATH, 'edited by hand\\n');
    expect(await codeOf(() => installer.install(host, request, writer))).to.equal(
      'PRECONDITION_FAILED',
    );
    expect(await host.readText(PATH)).to.equal('edited by hand\\n');
  });

  it('refuses a missing secret before anything is written', async () => {
    const view = desired().replace('API_TOKEN', 'NOT_ON_THIS_NODE');
    expect(await codeOf(() => install(view))).to.equal('SECRET_MISSING');
    expect(await host.exists(PATH)).to.equal(false);
  });
});
`;
}

export function blockInstallerTest(t: Template): string {
  const begin = `${t.comment} fleet:${t.domain}:begin`;
  const end = `${t.comment} fleet:${t.domain}:end`;
  return `${testPreamble(t)}
  it("writes the block and keeps the user's own lines byte for byte", async () => {
    const userText = '${t.comment} my own settings\\r\\nkeep = me\\r\\n'; // CRLF, as the user wrote it
    await host.writeFile(PATH, userText);
    const result = await install(desired());
    expect(result.verified).to.equal(true);
    const text = (await host.readText(PATH)) ?? '';
    expect(text.startsWith(userText)).to.equal(true);
    expect(text).to.contain('${begin}');
    expect(text).to.contain('owner: ops@example.org');
    expect(text).to.contain('token: canary-0123456789');
    expect(text.trimEnd().endsWith('${end}')).to.equal(true);
  });

  it('installing again changes nothing', async () => {
    await install(desired());
    const first = await host.readText(PATH);
    const again = await install(desired());
    expect(again.files[0]?.unchanged).to.equal(true);
    expect(await host.readText(PATH)).to.equal(first);
  });

  it('refuses a file whose markers were damaged, writing nothing', async () => {
    const damaged = 'keep = me\\n${begin}\\nowner: someone\\n'; // no end marker
    await host.writeFile(PATH, damaged);
    expect(await codeOf(() => install(desired()))).to.equal('MARKERS_UNPAIRED');
    expect(await host.readText(PATH)).to.equal(damaged);
  });

  it('refuses a missing secret before anything is written', async () => {
    const view = desired().replace('API_TOKEN', 'NOT_ON_THIS_NODE');
    expect(await codeOf(() => install(view))).to.equal('SECRET_MISSING');
    expect(await host.exists(PATH)).to.equal(false);
  });
});
`;
}

/**
 * The acceptance test: the testkit's `runAcceptance` takes the plugin, from its own folder, through
 * fleet's real cycle on a lab (install, a hand edit seen as diverged, adopt) with a coupled
 * `validate` action in the lab node's policy, and checks a change the action refuses rolls back;
 * pending with the reason where no `fleet` CLI is found.
 */
export function acceptanceTest(t: Template): string {
  const id = `${t.domain}-check`;
  return `import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import {
  acceptanceUnavailable,
  runAcceptance,
  skipForEnvironment,
  type AcceptanceNodeActions,
} from '@fleet/testkit';
import { ${camel(t.domain)}Domain } from '../src/index.js';

// This plugin's folder (dist/test/ is two levels down): the lab's node loads the plugin from it.
const PLUGIN = fileURLToPath(new URL('../..', import.meta.url));

// The domain's coupled action, as the lab node's policy defines it (docs/node-policy.md: an
// absolute program, no shell of fleet's, '{file}' the staged new file) and the role fleet.yaml
// asks for it. Put your tool's own check here: ['/usr/bin/ssh', '-G', '-F', '{file}', 'any'],
// ['/usr/bin/git', 'config', '--file', '{file}', '--list'], … This one refuses a marked line;
// what it prints comes back to the operator under the error (output: return, redacted).
const CHECK: AcceptanceNodeActions = {
  actions: {
    '${id}': {
      argv: [
        '/bin/sh',
        '-c',
        'if grep -n "fleet-acceptance: refuse" "$1" >&2; then echo "refused: a marked line" >&2; exit 1; fi',
        '${id}',
        '{file}',
      ],
      output: 'return',
    },
  },
  validate: '${id}',
};

describe('${t.domain} plugin: acceptance on a lab node (the real fleet CLI)', function () {
  this.timeout(300_000); // a lab up and a dozen fleet commands
  before(function () {
    const why = acceptanceUnavailable(); // no fleet CLI: $FLEET_BIN, or fleet on PATH
    if (why !== undefined) skipForEnvironment(this, why);
  });

  it('installs through its validate action, sees a hand edit, adopts it, rolls back a refusal', async () => {
    const result = await runAcceptance({
      plugin: PLUGIN,
      declaration: ${camel(t.domain)}Domain,
      nodeActions: CHECK,
      refusedChange: (canonical) => \`\${canonical}${t.comment} fleet-acceptance: refuse\\n\`,
    });
    expect(result.drift.before.map((item) => item.state)).to.deep.equal(['missing']);
    expect(result.receipt.files.map((file) => file.state)).to.deep.equal(['written']);
    expect(result.receipt.actions.map((a) => \`\${a.kind} \${a.status}\`)).to.deep.equal(['validate ok']);
    expect(result.drift.installed.map((item) => item.state)).to.deep.equal(['current']);
    expect(result.drift.handEdited.map((item) => item.state)).to.deep.equal(['diverged']);
    expect(result.refusedOverHandEdit.code).to.equal('DIVERGED');
    expect(result.drift.adopted.map((item) => item.state)).to.deep.equal(['current']);
    // The refused change: the node's file as it was (runAcceptance checks it), ACTION_FAILED.
    expect(result.refusedByAction?.code).to.equal('ACTION_FAILED');
    expect(result.refusedByAction?.message).to.contain('the validate action ${id} refused');
    // The tool's own words (grep's line, then its reason), as the operator sees them.
    const said = result.refusedByAction?.toolOutput?.split('\\n') ?? [];
    expect(said).to.have.length(2);
    expect(said[0]).to.contain('${t.comment} fleet-acceptance: refuse');
    expect(said[1]).to.equal('refused: a marked line');
  });
});
`;
}
