/** The entry's Node.js version check (src/engines.ts), and that `--help` loads no semver library. */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeEngineWarning } from '../src/engines.js';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const TRACER = pathToFileURL(
  fileURLToPath(new URL('../../../../bench/trace-imports.mjs', import.meta.url)),
).href;

describe('the CLI entry: Node.js version check', () => {
  const warning = (range: string, version: string) =>
    `Node version must be ${range} to use this CLI. Current node version: ${version}`;
  const cases: [range: string, version: string, warns: boolean][] = [
    ['>=20.19', '20.19.0', false],
    ['>=20.19', '20.20.2', false],
    ['>=20.19', '22.1.0', false],
    ['>=20.19', '20.18.9', true],
    ['>=20.19', '18.20.0', true],
    ['>=20.19.1', '20.19.0', true],
    ['>= 20', '20.0.0', false],
    ['>=20', '19.9.9', true],
  ];
  for (const [range, version, warns] of cases) {
    it(`${version} against ${range}: ${warns ? 'warns' : 'passes'}`, () => {
      expect(nodeEngineWarning(range, version)).to.equal(
        warns ? warning(range, version) : undefined,
      );
    });
  }

  it('refuses a range it does not understand rather than passing it', () => {
    expect(() => nodeEngineWarning('^20.19 || >=22', '20.19.0')).to.throw(/>=MAJOR/);
  });

  it("holds the CLI's own engines.node, which is of the understood form", () => {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { engines: { node: string } };
    expect(nodeEngineWarning(pkg.engines.node, process.versions.node)).to.equal(undefined);
  });

  it("answers --help with the oclif inside core's bundle, loading neither @oclif/core nor semver", () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-engines-'));
    try {
      const trace = join(dir, 'trace.jsonl');
      const run = spawnSync(process.execPath, ['--import', TRACER, BIN, '--help'], {
        env: { ...process.env, FLEET_TRACE_IMPORTS: trace },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stdout).to.contain('USAGE');
      const urls = readFileSync(trace, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { url?: string }).url)
        .filter((url): url is string => url !== undefined); // the tracer's last line has none
      // oclif runs from @fleet/core's bundle (docs/adr/0011-core-ships-a-bundle.md): its own
      // package's 160 modules are never loaded, nor semver, which its engine check would load.
      expect(urls.some((url) => url.endsWith('/core/dist/bundle/command.js'))).to.equal(true);
      expect(urls.filter((url) => url.includes('/node_modules/@oclif/core/'))).to.deep.equal([]);
      expect(urls.filter((url) => url.includes('/node_modules/semver/'))).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
