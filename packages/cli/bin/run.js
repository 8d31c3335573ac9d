#!/usr/bin/env node
// `fleet --version` is answered before oclif is imported: importing @oclif/core alone costs more
// than the whole cold-start budget of contract §14 leaves, and the answer needs nothing from it. The
// line is exactly oclif's own (`config.userAgent`), which a test checks.
if (process.argv.length === 3 && process.argv[2] === '--version') {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(
    `${pkg.name}/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`,
  );
} else {
  const { execute, settings } = await import('@oclif/core');
  // fleet and its plugins ship compiled JavaScript: never look for TypeScript sources to
  // transpile (a linked plugin, or NODE_ENV=test, would otherwise make oclif try — and warn).
  settings.enableAutoTranspile = false;
  await execute({ dir: import.meta.url });
}
