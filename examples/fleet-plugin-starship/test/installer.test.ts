import { expect } from 'chai';
import { isFleetError, renderDomainForHost, type NodeInstallRequest } from '@fleet/core';
import { createFakeHost, registryFromHooks, type FakeHost } from '@fleet/testkit';
import { createStarshipInstaller, starshipDomain } from '../src/index.js';
import register from '../src/register.js';

const PATH = '~/.config/starship.toml';
const FILE = starshipDomain.files[0];
const CANONICAL = '[character]\nsuccess_symbol = "[{{ host.starship_symbol }}](bold green)"\n';

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFleetError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('starship plugin: installer', () => {
  const installer = createStarshipInstaller();
  let host: FakeHost;

  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01' });
  });
  afterEach(() => host.dispose());

  function desired(canonical = CANONICAL): string {
    const [rendered] = renderDomainForHost(
      starshipDomain,
      'node-01',
      { starship_symbol: '>' },
      () => canonical,
    );
    return installer.view(FILE, rendered?.content ?? '', starshipDomain);
  }

  async function install(content: string) {
    const writer = host.writer(starshipDomain);
    const live = await writer.read(PATH);
    const request: NodeInstallRequest = {
      operationId: '01JTESTOPERATION0000000000',
      domain: 'starship',
      files: [{ fileId: 'starship', path: PATH, expectedSha256: live?.sha256 ?? null, content }],
      parameters: {},
    };
    return installer.install(host, request, writer);
  }

  it('is accepted by the core registry', async () => {
    const plugin = { name: 'fleet-plugin-starship', version: '0.1.0', type: 'link' };
    const registry = await registryFromHooks([{ plugin, hook: register }]);
    expect(registry.problems).to.deep.equal([]);
    expect((await registry.installer('starship')).domain).to.equal('starship');
  });

  it('writes a file that parses as TOML', async () => {
    const result = await install(desired());
    expect(result.verified).to.equal(true);
    expect(await host.readText(PATH)).to.equal('[character]\nsuccess_symbol = "[>](bold green)"\n');
  });

  it('the operator half refuses a canonical that is not TOML, naming its line', () => {
    const problems = installer.check?.(FILE, desired('[character\n'));
    expect(problems?.map((p) => [p.file, p.line])).to.deep.equal([
      ['domains/starship/starship.toml', 1],
    ]);
  });

  it('the node half refuses content that is not TOML, leaving the old file', async () => {
    await host.writeFile(PATH, 'add_newline = true\n');
    expect(await codeOf(() => install('add_newline =\n'))).to.equal('RENDER_FAILED');
    expect(await host.readText(PATH)).to.equal('add_newline = true\n');
  });
});
