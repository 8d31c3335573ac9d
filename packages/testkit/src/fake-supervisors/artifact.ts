/**
 * Test runtime artifacts (reliability catalogue 51: "a test generation whose binary prints a
 * wrong version, exits 1, or sleeps forever"): `npm pack`-shaped tarballs whose
 * `package/bin/run.js` accepts `controller serve --home H --node-id N --port P [--bind A]`
 * `[--tls-cert F --tls-key F]` (then https) and
 * answers `GET /v1/identity` like a controller — from its own generation (`generation.json`:
 * build id and commit), its `package.json` and its `--node-id` — unless told to lie. Like a real
 * artifact it carries a build record (`package/fleet-build.json`, contract §1.8), so fleet.yaml can
 * name its commit and staging records it. It prints
 * the `{"url": …}` line `controller serve --json` prints, so supervisors see it ready. It checks
 * no token: it is a stand-in for acceptance tests, never a controller.
 */
import { FLEET_PROTOCOL_VERSION, PROTOCOL_HEADER } from '@fleet/core';
import { makeTgz } from '../tarball.js';

export type FakeArtifactBehaviour = 'serve' | 'crash' | 'hang';

export interface FakeArtifactOptions {
  readonly name?: string;
  readonly version?: string;
  readonly behaviour?: FakeArtifactBehaviour;
  /** Fields the runtime reports instead of the true ones. */
  readonly lie?: {
    readonly nodeId?: string;
    readonly buildSha256?: string;
    /** The `build.commit` it reports instead of its generation's (the one its build record names). */
    readonly commit?: string;
    readonly protocol?: number;
    readonly health?: 'ok' | 'degraded';
    readonly domains?: readonly string[];
  };
  /** What the catalog lists (default: no domains, no probers, every supervisor fleet knows). */
  readonly catalog?: {
    readonly domains?: readonly string[];
    readonly bootstrapAdapters?: readonly string[];
  };
  /** Makes otherwise identical artifacts differ (a different build id). */
  readonly salt?: string;
  /**
   * The build record's commit and dirtiness (default {@link FAKE_ARTIFACT_COMMIT}, clean); `null`
   * packs no build record at all, as an artifact made by something else than fleet's prepack.
   */
  readonly build?: { readonly commit: string; readonly dirty?: boolean } | null;
}

/** The commit a fake artifact's build record names unless told otherwise. */
export const FAKE_ARTIFACT_COMMIT = '0123456789abcdef0123456789abcdef01234567';

/** The commit label fleet.yaml must record for a fake artifact made with `options`. */
export function fakeArtifactCommit(options: FakeArtifactOptions = {}): string | null {
  if (options.build === null) return null;
  const build = options.build ?? { commit: FAKE_ARTIFACT_COMMIT };
  return build.dirty === true ? `${build.commit}-dirty` : build.commit;
}

function script(options: FakeArtifactOptions): string {
  const config = {
    behaviour: options.behaviour ?? 'serve',
    lie: options.lie ?? {},
    domains: options.catalog?.domains ?? [],
    adapters: options.catalog?.bootstrapAdapters ?? ['systemd-user', 'windows-task', 'lab'],
    salt: options.salt ?? '',
    // It speaks the protocol of the fleet it stands in for (the lie aside).
    protocol: FLEET_PROTOCOL_VERSION,
    header: PROTOCOL_HEADER,
  };
  return `'use strict';
// fleet test runtime (@fleet/testkit fakeRuntimeArtifact): answers /v1/identity; checks no token.
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const config = ${JSON.stringify(config)};
const args = process.argv.slice(2);
const flag = (name, fallback) => { const i = args.lastIndexOf(name); return i >= 0 ? args[i + 1] : fallback; };
if (args[0] === '--version') { console.log(require('../package.json').version); process.exit(0); }
if (config.behaviour === 'crash') { console.error('fake runtime: crashing as configured'); process.exit(1); }
if (config.behaviour === 'hang') { setInterval(() => {}, 60000); process.on('SIGTERM', () => process.exit(0)); return; }
const pkg = require('../package.json');
let manifest = { buildId: null, commit: null };
try { manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'generation.json'), 'utf8')); } catch {}
const nodeId = flag('--node-id', 'unknown');
const startedAt = new Date().toISOString();
const identity = () => ({
  nodeId: config.lie.nodeId || nodeId,
  nodeIdFlag: config.lie.nodeId || nodeId,
  package: pkg.name,
  version: pkg.version,
  build: {
    sha256: config.lie.buildSha256 || manifest.buildId,
    commit: config.lie.commit || manifest.commit,
  },
  protocol: config.lie.protocol || config.protocol,
  catalog: {
    domains: (config.lie.domains || config.domains).map((domain) => ({ domain, plugin: 'fake', version: '0.0.0', coupling: 'none', implemented: true })),
    probers: [],
    bootstrapAdapters: config.adapters.map((supervisor) => ({ supervisor, platforms: ['linux', 'darwin', 'win32'], plugin: 'fake', version: '0.0.0', implemented: true })),
  },
  pid: process.pid,
  startedAt,
  health: { status: config.lie.health || 'ok', checks: [{ name: 'fake', status: config.lie.health === 'degraded' ? 'failing' : 'ok', detail: 'fake runtime' }] },
});
// With --tls-cert/--tls-key it serves https, as the real controller does (issue 35: a bootstrap
// installs the listen fleet.yaml names, TLS included).
const tlsCert = flag('--tls-cert');
const tlsKey = flag('--tls-key');
const handler = (req, res) => {
  if (req.method === 'GET' && req.url === '/v1/identity') {
    res.writeHead(200, { 'content-type': 'application/json', [config.header]: String(config.lie.protocol || config.protocol) });
    res.end(JSON.stringify(identity()));
  } else {
    res.writeHead(404, { 'content-type': 'application/json', [config.header]: String(config.lie.protocol || config.protocol) });
    res.end(JSON.stringify({ error: { code: 'OP_UNKNOWN', message: 'fake runtime' } }));
  }
};
const server = tlsCert && tlsKey
  ? require('node:https').createServer({ cert: fs.readFileSync(tlsCert), key: fs.readFileSync(tlsKey) }, handler)
  : http.createServer(handler);
// Without --port, the port of "controller serve" (7701), as the real runtime listens on.
server.listen(Number(flag('--port', '7701')), flag('--bind', '127.0.0.1'), () => {
  process.stdout.write(JSON.stringify({ url: (tlsCert ? 'https' : 'http') + '://127.0.0.1:' + server.address().port, fake: true, salt: config.salt }) + '\\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
}

/** A gzip'd `npm pack`-shaped tarball of a fake runtime. */
export function fakeRuntimeArtifact(options: FakeArtifactOptions = {}): Buffer {
  const build = options.build === null ? null : (options.build ?? { commit: FAKE_ARTIFACT_COMMIT });
  return makeTgz([
    {
      path: 'package/package.json',
      data: `${JSON.stringify({ name: options.name ?? '@fleet/cli', version: options.version ?? '0.0.0-fake', bin: { fleet: './bin/run.js' } })}\n`,
    },
    { path: 'package/bin/run.js', data: script(options), mode: 0o755 },
    ...(build === null
      ? []
      : [
          {
            path: 'package/fleet-build.json',
            data: `${JSON.stringify({ schema: 'fleet.build/v1', commit: build.commit, dirty: build.dirty ?? false })}\n`,
          },
        ]),
  ]);
}
