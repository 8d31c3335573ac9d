/**
 * `fleet plugins new` (docs/plugin-authoring.md, "Start from fleet plugins new"): a new domain plugin package that builds,
 * passes its own tests on `@fleet/testkit` fake hosts and links into a fleet — written against
 * the public helpers only (`defineRegistration`, `fileInstaller`, `fileAdopter`), with its own
 * package.json and tsconfig, nothing copied from this repository.
 *
 * {@link pluginScaffold} is pure (options → files, tested with a table of cases);
 * {@link writePluginScaffold} writes them into a new or empty directory.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { FleetError } from '../errors.js';
import { isFleetOwnPath } from '../policy/fleet-paths.js';
import { isHomePath } from '../paths.js';
import { corePackageVersion } from '../package-version.js';

export type ScaffoldKind = 'whole' | 'block';

export interface PluginScaffoldOptions {
  /** The npm package name (`fleet-plugin-npmrc`, `@acme/fleet-plugin-npmrc`). */
  readonly name: string;
  /** The domain it declares (default: the name without its scope and `fleet-plugin-` prefix). */
  readonly domain?: string;
  /** `whole`: the file equals its rendered source; `block`: only the lines between markers. */
  readonly kind: ScaffoldKind;
  /** The managed file's `~/` path on a node (default `~/.config/<domain>/config`). */
  readonly path?: string;
  /** The comment prefix of the block's marker lines (default `#`). */
  readonly comment?: string;
  /** The version range of `@fleet/core` and `@fleet/testkit` (default: this core's, `^x.y.z`). */
  readonly fleetRange?: string;
}

export interface PluginScaffold {
  readonly name: string;
  readonly domain: string;
  readonly kind: ScaffoldKind;
  readonly path: string;
  /** Relative path → content, in the order they are written. */
  readonly files: ReadonlyMap<string, string>;
}

const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
const DOMAIN_NAME = /^[a-z][a-z0-9-]*$/;

function usage(message: string): FleetError {
  return new FleetError('USAGE', message);
}

function coreRange(): string {
  return `^${corePackageVersion()}`;
}

function domainOf(name: string, domain: string | undefined): string {
  const derived = domain ?? name.replace(/^@[^/]+\//, '').replace(/^fleet-plugin-/, '');
  if (!DOMAIN_NAME.test(derived)) {
    throw usage(
      `domain ${JSON.stringify(derived)} must be lower-case letters, digits and dashes, starting with a letter${
        domain === undefined ? ' (name it with --domain)' : ''
      }`,
    );
  }
  return derived;
}

/** The files of a new plugin package; throws `USAGE` for a name, domain, path or comment that cannot work. */
export function pluginScaffold(options: PluginScaffoldOptions): PluginScaffold {
  const { name, kind } = options;
  if (name.length > 214 || !PACKAGE_NAME.test(name)) {
    throw usage(
      `${JSON.stringify(name)} is not an npm package name (lower case, digits, - . _; an optional @scope/)`,
    );
  }
  const domain = domainOf(name, options.domain);
  const path = options.path ?? `~/.config/${domain}/config`;
  // The path is written into TypeScript strings and comments: plain path characters only.
  if (!/^~\/[A-Za-z0-9._/@+-]+$/.test(path) || !isHomePath(path) || isFleetOwnPath(path)) {
    throw usage(
      `--path ${JSON.stringify(path)} must be a file under the node's home, written '~/…' (quoted; letters, digits and . _ / @ + -), and not fleet's own state`,
    );
  }
  const comment = options.comment ?? '#';
  if (!/^[#;!%/*-]{1,4}$/.test(comment)) {
    throw usage(
      `--comment ${JSON.stringify(comment)} must be 1–4 of the comment characters # ; ! % / * -`,
    );
  }
  const range = options.fleetRange ?? coreRange();
  const t = { name, domain, kind, path, comment, range };
  const files = new Map<string, string>([
    ['package.json', packageJson(t)],
    ['tsconfig.json', TSCONFIG],
    ['.gitignore', 'node_modules/\ndist/\n'],
    ['.mocharc.json', '{ "spec": "dist/test/**/*.test.js", "timeout": 10000 }\n'],
    ['README.md', readme(t)],
    ['src/index.ts', indexTs(t)],
    ['src/domain.ts', domainTs(t)],
    ['src/register.ts', registerTs(t)],
    ['src/installer.ts', installerTs(t)],
    ['src/adopter.ts', adopterTs(t)],
    ['test/register.test.ts', registerTest(t)],
    ['test/installer.test.ts', kind === 'block' ? blockInstallerTest(t) : wholeInstallerTest(t)],
  ]);
  return { name, domain, kind, path, files };
}

async function isEmptyOrAbsent(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code === 'ENOTDIR') return false;
    throw error;
  }
}

/** Writes {@link pluginScaffold}'s files into `dir`, which must not exist or be empty. */
export async function writePluginScaffold(
  dir: string,
  options: PluginScaffoldOptions,
): Promise<PluginScaffold & { readonly root: string }> {
  const scaffold = pluginScaffold(options);
  const root = resolve(dir);
  if (!(await isEmptyOrAbsent(root))) {
    throw new FleetError(
      'INIT_TARGET_NOT_EMPTY',
      `${root} is not empty: fleet plugins new writes only into a new or empty directory`,
    );
  }
  for (const [file, content] of scaffold.files) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), content, { flag: 'wx' });
  }
  return { ...scaffold, root };
}

interface Template {
  readonly name: string;
  readonly domain: string;
  readonly kind: ScaffoldKind;
  readonly path: string;
  readonly comment: string;
  readonly range: string;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
const camel = (domain: string): string =>
  domain.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const pascal = (domain: string): string => camel(domain).replace(/^[a-z]/, (c) => c.toUpperCase());

function packageJson(t: Template): string {
  return json({
    name: t.name,
    version: '0.1.0',
    description: `fleet domain plugin: ${t.kind === 'block' ? `the fleet-managed block of ${t.path}` : t.path}`,
    private: true,
    type: 'module',
    engines: { node: '>=20.19' },
    keywords: ['oclif-plugin', 'fleet-plugin'],
    exports: {
      '.': { types: './dist/src/index.d.ts', import: './dist/src/index.js' },
      './package.json': './package.json',
    },
    types: './dist/src/index.d.ts',
    files: ['dist/src', 'README.md'],
    scripts: { build: 'tsc -p .', test: 'mocha', prepack: 'tsc -p .' },
    oclif: { hooks: { 'fleet:register': './dist/src/register.js' } },
    dependencies: { '@fleet/core': t.range },
    devDependencies: {
      // The testkit's writer is the controller's real one: the two are installed together.
      '@fleet/controller': t.range,
      '@fleet/testkit': t.range,
      '@types/chai': '^5.2.0',
      '@types/mocha': '^10.0.10',
      '@types/node': '^20.19.0',
      chai: '^6.2.0',
      mocha: '^12.0.1',
      typescript: '~5.9.3',
    },
  });
}

const TSCONFIG = json({
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023'],
    types: ['node', 'mocha'],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    declaration: true,
    sourceMap: true,
    skipLibCheck: true,
    rootDir: '.',
    outDir: 'dist',
  },
  include: ['src', 'test'],
});

function readme(t: Template): string {
  return `# ${t.name}

A fleet domain plugin: the domain \`${t.domain}\` manages ${
    t.kind === 'block'
      ? `the fleet-managed block of \`${t.path}\` (the lines between \`${t.comment} fleet:${t.domain}:begin\` and \`${t.comment} fleet:${t.domain}:end\`; every other line stays the host user's)`
      : `\`${t.path}\` as a whole file`
  }. Written by \`fleet plugins new\`.

\`\`\`sh
npm install        # @fleet/core, @fleet/controller, @fleet/testkit: packed from a fleet checkout (docs/plugin-authoring.md, "Installing @fleet/core and @fleet/testkit")
npm run build
npm test           # the installer and the registration on @fleet/testkit fake hosts
fleet plugins link . --no-install
\`\`\`

In the fleet repository: add \`${t.domain}\` to a host's \`domains\` in fleet.yaml, edit
\`domains/${t.domain}/${t.domain}\` (the canonical source, a template: \`{{ host.NAME }}\`,
\`{{ secret.NAME }}\`), commit, then \`fleet config plan HOST --domain ${t.domain}\` and
\`fleet config install HOST --domain ${t.domain} --confirm\`. A node serves the domain once its node
policy lists it (\`domains: { ${t.domain}: {} }\` in ~/.config/fleet/node-policy.yaml).

Where to go next: \`src/installer.ts\` (a syntax check of your file's content), \`src/domain.ts\`
(host variables, more files), and fleet's docs/plugin-authoring.md (probers, coupled actions).
`;
}

function indexTs(t: Template): string {
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

function domainTs(t: Template): string {
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
 * \`hostVariables\`). No process action is coupled to it.
 */
import type { DomainDeclaration } from '@fleet/core';

/** What \`fleet init\` writes as \`domains/${t.domain}/${t.domain}\`: an example canonical source. */
const EXAMPLE = \`${t.comment} Managed by fleet (domains/${t.domain}/${t.domain}): edit the repository, not this file.
${t.comment} owner: {{ host.${t.domain.replace(/-/g, '_')}_owner }}
\`;

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

function registerTs(t: Template): string {
  const d = camel(t.domain);
  return `/**
 * The plugin's \`fleet:register\` hook (package.json \`oclif.hooks["fleet:register"]\`): plain
 * descriptors built with \`defineRegistration\`; the implementations load lazily, only when a
 * command (or a node's controller) needs them.
 */
import { defineRegistration, type FleetRegistration, type RegisterHookOptions } from '@fleet/core';
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

function installerTs(t: Template): string {
  return `/**
 * The ${t.domain} installer: \`@fleet/core\`'s \`fileInstaller\` — the operator half renders the
 * view${t.kind === 'block' ? " (the block's body)" : ''}, the node half resolves secrets, ${
   t.kind === 'block' ? 'splices the block into the live file, ' : ''
 }writes through the controller's
 * safe writer (compare and swap, backup, atomic replace), reads back and restores on failure.
 *
 * To refuse content your tool could not read, pass \`check: (file, body, source) => problems\`:
 * it runs before planning (a bad canonical is an \`error\` item in \`fleet drift\`) and again on the
 * node with secrets resolved. Problems name lines, never text.
 */
import { fileInstaller, type Installer } from '@fleet/core';
import { DOMAIN, ${camel(t.domain)}Domain } from './domain.js';

export function create${pascal(t.domain)}Installer(): Installer {
  return fileInstaller({ domain: DOMAIN, files: ${camel(t.domain)}Domain.files });
}
`;
}

function adopterTs(t: Template): string {
  return `/**
 * The ${t.domain} adopter: \`@fleet/core\`'s \`fileAdopter\` — \`fleet config adopt HOST ${t.path}\`
 * takes ${t.kind === 'block' ? "the block's body (never the user's lines around it)" : 'the live file'}
 * into \`mirror/<host>/${t.domain}/\`; the core reverse-substitutes host variables and scans for
 * secrets first.
 */
import { fileAdopter, type Adopter } from '@fleet/core';
import { DOMAIN } from './domain.js';

export function create${pascal(t.domain)}Adopter(): Adopter {
  return fileAdopter({ domain: DOMAIN });
}
`;
}

function registerTest(t: Template): string {
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
import { isFleetError, renderDomainForHost, type NodeInstallRequest } from '@fleet/core';
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

function wholeInstallerTest(t: Template): string {
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

function blockInstallerTest(t: Template): string {
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
