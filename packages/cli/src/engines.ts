/**
 * The Node.js version check of the CLI's entry (bin/run.js), without a semver library: oclif's own
 * check, run when @oclif/core is imported, loads the whole `semver` package (47 modules, the
 * largest part of what `fleet --help` imports after oclif itself, contract §14) to test oclif's
 * looser range. The entry skips that one and holds the running Node.js to @fleet/cli's own
 * `engines.node`, which is always of the form `>=MAJOR[.MINOR[.PATCH]]`.
 */

const LOWER_BOUND = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/;
const VERSION = /^v?(\d+)\.(\d+)\.(\d+)/;

/**
 * The warning to emit when `version` (`process.versions.node`) does not satisfy `range`, in
 * oclif's wording; `undefined` when it does. A range of another form is an error: the check must
 * not pass by not understanding it.
 */
export function nodeEngineWarning(range: string, version: string): string | undefined {
  const bound = LOWER_BOUND.exec(range.trim());
  if (bound === null) {
    throw new Error(`engines.node must be of the form >=MAJOR.MINOR.PATCH, not ${range}`);
  }
  const running = VERSION.exec(version);
  const want = [bound[1], bound[2], bound[3]].map((part) => Number(part ?? 0));
  const have = running === null ? [0, 0, 0] : running.slice(1, 4).map(Number);
  for (let i = 0; i < 3; i += 1) {
    const a = have[i] as number;
    const b = want[i] as number;
    if (a !== b) {
      return a > b
        ? undefined
        : `Node version must be ${range} to use this CLI. Current node version: ${version}`;
    }
  }
  return undefined;
}
