/**
 * `fleet plugins new` (docs/plugin-authoring.md, "Start from fleet plugins new"): a new domain plugin package that builds,
 * passes its own tests on `@fleet/testkit` fake hosts and links into a fleet — written against
 * the public helpers only (`defineRegistration`, `fileInstaller`, `fileAdopter`), with its own
 * package.json and tsconfig, nothing copied from this repository.
 *
 * {@link pluginScaffold} is pure (options → files, tested with a table of cases);
 * {@link writePluginScaffold} writes them into a new or empty directory. This module checks the
 * options and writes the package's own files (package.json, tsconfig, .npmrc); the templates of
 * its sources, tests and README are scaffold-sources.ts, scaffold-tests.ts and scaffold-readme.ts.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { FleetError } from '../errors.js';
import { isFleetOwnPath } from '../policy/fleet-paths.js';
import { isHomePath } from '../paths.js';
import { corePackageVersion } from '../package-version.js';
import {
  exampleCanonical,
  json,
  ownerVariable,
  type ScaffoldKind,
  type Template,
} from './scaffold-template.js';
import { readme } from './scaffold-readme.js';
import { adopterTs, domainTs, indexTs, installerTs, registerTs } from './scaffold-sources.js';
import {
  acceptanceTest,
  blockInstallerTest,
  registerTest,
  wholeInstallerTest,
} from './scaffold-tests.js';

export type { ScaffoldKind } from './scaffold-template.js';

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
  /**
   * The npm registry fleet's packages are published to, bound to the `@fleet` scope in the
   * package's `.npmrc` (default: {@link UNSET_FLEET_REGISTRY}, which resolves nowhere).
   */
  readonly registry?: string;
}

/**
 * The `@fleet` registry of a package made without `--registry`: a name in `.invalid` (RFC 2606),
 * which never resolves — so `npm install` fails at once rather than asking the public registry,
 * where an `@fleet` scope is not fleet's (dependency confusion). The offline install of the packed
 * tarballs (docs/plugin-authoring.md) needs no registry for them.
 */
export const UNSET_FLEET_REGISTRY = 'https://fleet-packages.invalid/';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The registry URL, normalised with a final `/`. HTTPS, or plain HTTP on loopback only (a local
 * mirror): packages fetched in clear text from another host could be swapped on the way. No
 * credentials in it: `.npmrc` is committed with the package; a token belongs in the user's
 * `~/.npmrc`.
 */
export function fleetRegistryUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`--registry ${JSON.stringify(value)} is not a URL (https://registry.example.org/)`);
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw usage(
      `--registry ${JSON.stringify(value)} must be https:// (plain http:// only on 127.0.0.1, localhost or [::1])`,
    );
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw usage(
      `--registry ${JSON.stringify(value)} must carry no credentials, query or fragment (a token goes in your ~/.npmrc, not the package's)`,
    );
  }
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

export interface PluginScaffold {
  readonly name: string;
  readonly domain: string;
  readonly kind: ScaffoldKind;
  readonly path: string;
  /** The example canonical source, `domains/<domain>/<path>` in a fleet repository. */
  readonly example: { readonly path: string; readonly content: string };
  /** The host variable the example renders. */
  readonly hostVariable: string;
  /** The registry its `.npmrc` binds `@fleet` to ({@link UNSET_FLEET_REGISTRY} when none was named). */
  readonly registry: string;
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
  const registry =
    options.registry === undefined ? UNSET_FLEET_REGISTRY : fleetRegistryUrl(options.registry);
  const t = { name, domain, kind, path, comment, range };
  const files = new Map<string, string>([
    ['package.json', packageJson(t)],
    ['tsconfig.json', TSCONFIG],
    ['.npmrc', npmrc(registry)],
    ['.gitignore', 'node_modules/\ndist/\n.fleet-lab/\n'],
    // No `spec` here: mocha adds a config file's spec to the files named on its command line, so
    // `npx mocha dist/test/one.test.js` would run every test. The glob is the test script's.
    ['.mocharc.json', '{ "timeout": 10000 }\n'],
    ['README.md', readme(t)],
    ['src/index.ts', indexTs(t)],
    ['src/domain.ts', domainTs(t)],
    ['src/register.ts', registerTs(t)],
    ['src/installer.ts', installerTs(t)],
    ['src/adopter.ts', adopterTs(t)],
    ['test/register.test.ts', registerTest(t)],
    ['test/installer.test.ts', kind === 'block' ? blockInstallerTest(t) : wholeInstallerTest(t)],
    ['test/acceptance.test.ts', acceptanceTest(t)],
  ]);
  const example = { path: domain, content: exampleCanonical(t) };
  return {
    name,
    domain,
    kind,
    path,
    registry,
    example,
    hostVariable: ownerVariable(domain),
    files,
  };
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

function npmrc(registry: string): string {
  const unset =
    registry === UNSET_FLEET_REGISTRY
      ? [
          '# No registry was named (`fleet plugins new --registry URL`): set the one your fleet packages',
          '# are published to, or install the packed tarballs offline (docs/plugin-authoring.md):',
          '#   npm install --no-save --fetch-retries=0 ~/fleet-tgz/fleet-*.tgz',
        ]
      : [];
  return `${[
    "# fleet's packages (@fleet/*) come from this registry only: the public registry's @fleet scope",
    "# is not fleet's, and asking it would let anyone publish into this plugin (dependency confusion).",
    ...unset,
    `@fleet:registry=${registry}`,
  ].join('\n')}\n`;
}

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
    // `npm test` builds first: an author's edit is always what the tests run.
    scripts: {
      build: 'tsc -p .',
      pretest: 'tsc -p .',
      test: "mocha 'dist/test/**/*.test.js'",
      prepack: 'tsc -p .',
    },
    oclif: { hooks: { 'fleet:register': './dist/src/register.js' } },
    dependencies: { '@fleet/core': t.range },
    devDependencies: {
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
