/** Tarball fixtures: the writer is the testkit's (third parties build artifacts with it too). */
import { type FixtureEntry } from '@fleet/testkit';

export { makeTgz, paxPath, type FixtureEntry } from '@fleet/testkit';

/** A minimal runtime package: `package/package.json` and `package/bin/run.js`. */
export function runtimePackage(
  name = '@fleet/cli',
  version = '1.2.0',
  script = 'console.log("runtime");\n',
): FixtureEntry[] {
  return [
    {
      path: 'package/package.json',
      data: `${JSON.stringify({ name, version, type: 'module' })}\n`,
    },
    { path: 'package/bin/run.js', data: script, mode: 0o755 },
    { path: 'package/README.md', data: '# runtime\n' },
  ];
}
