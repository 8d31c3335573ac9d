#!/usr/bin/env node
// Writes the runtime artifact's build record (contract §1.8): run first in @fleet/cli's `prepack`,
// it records in packages/cli/fleet-build.json the commit the tree is at and whether the tree had
// uncommitted changes, so `npm pack -w packages/cli` carries the commit it was built from — npm 11
// records no `gitHead`, and fleet.yaml's `artifacts[].commit` is checked against this record (by
// the operator before anything is sent, by the node when it stages the generation). `postpack`
// (`--clean`) removes it again.
//
// Dirty means any change `git status` shows: tracked files modified, staged or deleted, and
// untracked files that are not ignored (an untracked source file can be in the build). Ignored
// files (dist/, node_modules/, the manifests, this record) are build output, not source.
//
// It fails loudly (and so does the pack) outside a git work tree: an artifact that cannot say what
// it was built from is refused by every verb that would install it.
//
// Usage: node scripts/build-record.mjs [--clean]
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
const record = path.join(root, 'packages', 'cli', 'fleet-build.json');

function git(args) {
  const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    const why = result.error?.message ?? (result.stderr.trim() || `exit ${result.status}`);
    throw new Error(`git ${args.join(' ')} failed (${why}): pack the runtime from a git checkout`);
  }
  return result.stdout;
}

try {
  if (process.argv.includes('--clean')) {
    if (existsSync(record)) rmSync(record);
  } else {
    const commit = git(['rev-parse', 'HEAD']).trim();
    if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit)) {
      throw new Error(`git rev-parse HEAD printed ${JSON.stringify(commit)}, not a commit hash`);
    }
    const dirty = git(['status', '--porcelain=v1', '--untracked-files=normal']).trim() !== '';
    writeFileSync(record, `${JSON.stringify({ schema: 'fleet.build/v1', commit, dirty })}\n`);
    process.stderr.write(
      `build-record: packages/cli/fleet-build.json: commit ${commit}${dirty ? ' (dirty: the tree has uncommitted changes)' : ''}\n`,
    );
  }
} catch (error) {
  process.stderr.write(`build-record: error: ${error.message}\n`);
  process.exitCode = 1;
}
