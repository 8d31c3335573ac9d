import { expect } from 'chai';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fleetRegistryUrl,
  isFleetError,
  pluginScaffold,
  UNSET_FLEET_REGISTRY,
  writePluginScaffold,
  type PluginScaffoldOptions,
} from '../src/index.js';

function codeAndMessage(options: PluginScaffoldOptions): string {
  try {
    pluginScaffold(options);
  } catch (error) {
    if (isFleetError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'no error';
}

describe('plugin scaffold (fleet plugins new)', () => {
  const accepted: [PluginScaffoldOptions, { domain: string; path: string }][] = [
    [
      { name: 'fleet-plugin-npmrc', kind: 'block' },
      { domain: 'npmrc', path: '~/.config/npmrc/config' },
    ],
    [
      { name: '@acme/fleet-plugin-starship', kind: 'whole', path: '~/.config/starship.toml' },
      { domain: 'starship', path: '~/.config/starship.toml' },
    ],
    [
      { name: 'my-tool', kind: 'whole', domain: 'my-tool' },
      { domain: 'my-tool', path: '~/.config/my-tool/config' },
    ],
  ];
  for (const [options, expected] of accepted) {
    it(`names ${options.name} domain ${expected.domain} at ${expected.path}`, () => {
      const scaffold = pluginScaffold(options);
      expect({ domain: scaffold.domain, path: scaffold.path }).to.deep.equal(expected);
    });
  }

  const refused: [string, PluginScaffoldOptions, RegExp][] = [
    [
      'a name npm refuses',
      { name: 'Fleet Plugin', kind: 'whole' },
      /^USAGE: "Fleet Plugin" is not an npm package name/,
    ],
    [
      'a domain that starts with a digit',
      { name: 'fleet-plugin-1x', kind: 'whole' },
      /^USAGE: domain "1x" .*\(name it with --domain\)$/,
    ],
    [
      'an absolute path',
      { name: 'fleet-plugin-a', kind: 'whole', path: '/etc/a' },
      /^USAGE: --path "\/etc\/a" must be a file under the node's home/,
    ],
    [
      'a path out of the home',
      { name: 'fleet-plugin-a', kind: 'whole', path: '~/../a' },
      /^USAGE: --path/,
    ],
    [
      "fleet's own state",
      { name: 'fleet-plugin-a', kind: 'whole', path: '~/.config/fleet/node-policy.yaml' },
      /not fleet's own state$/,
    ],
    [
      'a path with a quote',
      { name: 'fleet-plugin-a', kind: 'whole', path: "~/it's" },
      /^USAGE: --path/,
    ],
    [
      'a comment with a space',
      { name: 'fleet-plugin-a', kind: 'block', comment: '# x' },
      /^USAGE: --comment "# x" must be 1–4 of the comment characters/,
    ],
  ];
  for (const [what, options, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(codeAndMessage(options)).to.match(message);
    });
  }

  it('writes a standalone package: its own tsconfig, @fleet/core and @fleet/testkit at this core version', async () => {
    const { files } = pluginScaffold({ name: 'fleet-plugin-npmrc', kind: 'block', comment: ';' });
    expect([...files.keys()]).to.include.members([
      'package.json',
      'tsconfig.json',
      'src/installer.ts',
      'test/installer.test.ts',
      'test/acceptance.test.ts',
    ]);
    // The acceptance cycle on a lab (the testkit's runAcceptance), from the plugin's own folder,
    // with a validate action in the lab node's policy and a change it refuses, in `;` comments.
    const acceptance = files.get('test/acceptance.test.ts') ?? '';
    expect(acceptance).to.contain('declaration: npmrcDomain,\n      nodeActions: CHECK,');
    expect(acceptance).to.contain("'npmrc-check': {");
    expect(acceptance).to.contain("validate: 'npmrc-check',");
    // The check's output comes back to the operator, and the test reads the refusal's lines.
    expect(acceptance).to.contain("output: 'return',");
    expect(acceptance).to.contain("expect(said[0]).to.contain('; fleet-acceptance: refuse');");
    expect(acceptance).to.contain(
      'refusedChange: (canonical) => `${canonical}; fleet-acceptance: refuse\\n`,',
    );
    expect(files.get('.gitignore')).to.contain('.fleet-lab/');
    const pkg = JSON.parse(files.get('package.json') ?? '{}') as Record<
      string,
      Record<string, unknown>
    >;
    const core = JSON.parse(
      await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(pkg['dependencies']).to.deep.equal({ '@fleet/core': `^${core.version}` });
    expect(pkg['devDependencies']?.['@fleet/testkit']).to.equal(`^${core.version}`);
    // The testkit brings the controller it writes through: the plugin names only the two.
    expect(
      Object.keys(pkg['devDependencies'] ?? {}).filter((n) => n.startsWith('@fleet/')),
    ).to.deep.equal(['@fleet/testkit']);
    expect(pkg['scripts']?.['pretest']).to.equal('tsc -p .');
    expect(pkg['oclif']).to.deep.equal({ hooks: { 'fleet:register': './dist/src/register.js' } });
    expect(files.get('tsconfig.json')).to.not.contain('extends');
    expect(files.get('src/domain.ts')).to.contain("begin: '; fleet:npmrc:begin'");
    // Public helpers only: nothing is imported but the two public packages (core through its
    // plugin API, `@fleet/core/plugin`, and its main entry) and its own files.
    for (const [file, text] of files) {
      for (const [, from] of text.matchAll(/from '([^']+)'/g)) {
        expect(from, file).to.match(
          /^(?:@fleet\/core(?:\/plugin)?|@fleet\/testkit|chai|node:url|\.\.?\/.*)$/,
        );
      }
    }
  });

  it('writes only into a new or empty directory, and never over a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-scaffold-'));
    try {
      await writeFile(join(dir, 'keep.txt'), 'mine');
      let code = 'no error';
      await writePluginScaffold(dir, { name: 'fleet-plugin-a', kind: 'whole' }).catch(
        (error: unknown) => {
          code = isFleetError(error) ? error.code : String(error);
        },
      );
      expect(code).to.equal('INIT_TARGET_NOT_EMPTY');
      expect(await readdir(dir)).to.deep.equal(['keep.txt']);
      const result = await writePluginScaffold(join(dir, 'new'), {
        name: 'fleet-plugin-a',
        kind: 'whole',
      });
      expect((await readdir(join(dir, 'new'))).sort()).to.include.members([
        'package.json',
        'src',
        'test',
      ]);
      expect(result.root).to.equal(join(dir, 'new'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  const registries: [string, string][] = [
    ['https://npm.example.org', 'https://npm.example.org/'],
    ['https://npm.example.org/repository/npm/', 'https://npm.example.org/repository/npm/'],
    ['http://127.0.0.1:4873', 'http://127.0.0.1:4873/'],
    ['http://localhost:4873/', 'http://localhost:4873/'],
    ['http://[::1]:4873/', 'http://[::1]:4873/'],
  ];
  for (const [given, url] of registries) {
    it(`binds @fleet to the registry ${given}`, () => {
      expect(fleetRegistryUrl(given)).to.equal(url);
      const npmrc = pluginScaffold({
        name: 'fleet-plugin-a',
        kind: 'whole',
        registry: given,
      }).files.get('.npmrc');
      expect(npmrc?.split('\n').filter((line) => !line.startsWith('#'))).to.deep.equal([
        `@fleet:registry=${url}`,
        '',
      ]);
    });
  }

  const badRegistries: [string, RegExp][] = [
    ['http://npm.example.org/', /must be https:\/\/ \(plain http:\/\/ only on 127\.0\.0\.1/],
    ['https://user:secret@npm.example.org/', /must carry no credentials/],
    ['https://npm.example.org/?token=x', /must carry no credentials, query or fragment/],
    ['npm.example.org', /is not a URL/],
    ['file:///srv/npm', /must be https:\/\//],
  ];
  for (const [given, message] of badRegistries) {
    it(`refuses the registry ${given}`, () => {
      expect(codeAndMessage({ name: 'fleet-plugin-a', kind: 'whole', registry: given })).to.match(
        new RegExp(
          `^USAGE: --registry ${JSON.stringify(given).replace(/[.?/]/g, '\\$&')} ${message.source}`,
        ),
      );
    });
  }

  it('without a registry, binds @fleet to a name that never resolves — never the public default', () => {
    const scaffold = pluginScaffold({ name: 'fleet-plugin-a', kind: 'whole' });
    expect(scaffold.registry).to.equal(UNSET_FLEET_REGISTRY);
    expect(scaffold.files.get('.npmrc')).to.match(
      /^@fleet:registry=https:\/\/fleet-packages\.invalid\/$/m,
    );
    expect(scaffold.files.get('.npmrc')).to.contain('npm install --no-save');
  });

  it("the README's commands name no flag the CLI lacks", () => {
    const readme =
      pluginScaffold({ name: 'fleet-plugin-npmrc', kind: 'block' }).files.get('README.md') ?? '';
    expect(readme).to.not.contain('--domain');
    expect(readme).to.contain('fleet config plan HOST npmrc');
  });

  it('its README gives the whole lab path, the offline install, the plugin entry and the coupled action', () => {
    const scaffold = pluginScaffold({ name: 'fleet-plugin-gitini', kind: 'whole' });
    const readme = scaffold.files.get('README.md') ?? '';
    for (const line of [
      'fleet config install node-01 gitini --confirm',
      'fleet lab down',
      'npm install --no-save --fetch-retries=0 ~/fleet-tgz/fleet-*.tgz',
      'fleet plugins link . --no-install',
      '@fleet/core/plugin',
      'domains: { gitini: { validate: ID } }',
      'fleet lab up --hosts 1 --node-actions FILE',
    ]) {
      expect(readme, line).to.contain(line);
    }
    expect(scaffold.files.get('src/installer.ts')).to.contain('VALIDATE_ROLE');
  });
});
