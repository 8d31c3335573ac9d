#!/usr/bin/env node
// Checks that the public API of @fleet/core and @fleet/testkit still matches the committed reports
// (packages/*/etc/*.api.md), so an accidental breaking change fails `npm test`.
//
// Why not `api-extractor run` alone: the reports print zod-inferred enum types whose members
// TypeScript orders by internal type ids, which differ between a clean build and an incremental
// one (and so between CI and a developer's tree). A reordered enum is not an API change, so both
// reports are compared with every run of enum-member lines (`name: "name";`) sorted.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTwoFilesPatch } from 'diff';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = [
  { dir: 'packages/core', name: 'core', config: 'api-extractor.json' },
  // core's second entry point, `@fleet/core/command` (the base command; needs @oclif/core)
  { dir: 'packages/core', name: 'core-command', config: 'api-extractor.command.json' },
  // the node-side entry point, `@fleet/core/node` (what the controller and plugins' node halves use)
  { dir: 'packages/core', name: 'core-node', config: 'api-extractor.node.json' },
  // `@fleet/core/plugin`: the plugin API (what plugins and the scaffold's templates import)
  { dir: 'packages/core', name: 'core-plugin', config: 'api-extractor.plugin.json' },
  // `@fleet/core/zod`: the zod fleet's packages build their schemas with (the copy in core's bundle)
  { dir: 'packages/core', name: 'core-zod', config: 'api-extractor.zod.json' },
  // `@fleet/core/di`: the container the CLI builds its services from (tsyringe)
  { dir: 'packages/core', name: 'core-di', config: 'api-extractor.di.json' },
  { dir: 'packages/testkit', name: 'testkit', config: 'api-extractor.json' },
];
const ENUM_MEMBER = /^(\s*)("?)([^":\s]+)\2: "\3";$/;

/** Sorts each run of consecutive enum-member lines; everything else stays as it is. */
export function normalise(report) {
  const lines = report.replace(/\r\n/g, '\n').split('\n');
  const out = [];
  let run = [];
  const flush = () => {
    out.push(...run.sort());
    run = [];
  };
  for (const line of lines) {
    if (ENUM_MEMBER.test(line)) run.push(line);
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out.join('\n');
}

let failed = false;
for (const pkg of PACKAGES) {
  const config = path.join(root, pkg.dir, pkg.config);
  const committedPath = path.join(root, pkg.dir, 'etc', `${pkg.name}.api.md`);
  const freshPath = path.join(root, pkg.dir, 'dist', 'api-report', `${pkg.name}.api.md`);
  // Without --local, API Extractor leaves the tree alone and writes its report to the temp folder;
  // its own verdict (exit code) is replaced by the order-insensitive comparison below.
  const run = spawnSync(
    process.execPath,
    [
      path.join(root, 'node_modules', '@microsoft', 'api-extractor', 'bin', 'api-extractor'),
      'run',
      '-c',
      config,
    ],
    { encoding: 'utf8' },
  );
  if (!existsSync(freshPath)) {
    process.stderr.write(
      `${run.stdout}${run.stderr}\napi:check: API Extractor produced no report for ${pkg.dir}\n`,
    );
    failed = true;
    continue;
  }
  const committed = normalise(readFileSync(committedPath, 'utf8'));
  const fresh = normalise(readFileSync(freshPath, 'utf8'));
  if (committed === fresh) {
    process.stdout.write(`api:check: ${pkg.dir}: the public API matches etc/${pkg.name}.api.md\n`);
    continue;
  }
  failed = true;
  process.stderr.write(
    createTwoFilesPatch(
      `${pkg.dir}/etc/${pkg.name}.api.md`,
      'current build',
      committed,
      fresh,
      '',
      '',
      {
        context: 3,
      },
    ),
  );
}
if (failed) {
  process.stderr.write(
    'api:check: the public API of @fleet/core or @fleet/testkit changed. If intended: npm run api, review the diff of packages/*/etc/*.api.md and commit it (a breaking change to the plugin contract also raises FLEET_PLUGIN_API_VERSION; see docs/plugin-authoring.md).\n',
  );
  process.exit(1);
}
