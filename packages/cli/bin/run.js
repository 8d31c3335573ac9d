#!/usr/bin/env node
// Two verbs are answered before oclif is imported (importing @oclif/core alone costs more than the
// whole cold-start budget of contract §14 leaves):
// - `fleet --version`: the line is exactly oclif's own (`config.userAgent`), which a test checks;
// - `fleet controller serve …` and `fleet controller runtime-run …`: the node agent and its
//   runtime runner run from @fleet/controller's own entries, so neither process loads oclif or the
//   CLI (contract §14), nor a plugin from oclif's data directory — whatever supervisor started it
//   with this script (docs/runtime-lifecycle.md). `--help` still goes to oclif.
const args = process.argv.slice(2);

/**
 * A verb the operator's resident process runs goes there when this user's resident listens
 * (docs/resident.md): the call then pays Node.js's start and a socket, not loading oclif, core and
 * the plugins. False when the verb is to run in this process — which, when no resident listens and
 * the operator set FLEET_RESIDENT=auto, starts one as it ends (ADR 0017).
 */
async function ranInResident() {
  if (process.platform === 'win32' || process.env.FLEET_RESIDENT === 'off') return false;
  // @fleet/resident's caller side imports Node's own modules only (docs/resident.md); it does not
  // know where the CLI is: the socket is named after this CLI's root, the directory above bin/.
  const { cliRootAt, residentMode, residentVerb, usablePlace } =
    await import('@fleet/resident/place.js');
  const { mode, problem } = residentMode(process.env.FLEET_RESIDENT);
  if (problem !== undefined) process.stderr.write(`Warning: ${problem}\n`);
  if (mode === 'off' || !residentVerb(args)) return false;
  const cliRoot = cliRootAt(new URL('..', import.meta.url));
  const place = usablePlace(cliRoot);
  if (place !== undefined) {
    const { callResident } = await import('@fleet/resident/client.js');
    const answer = await callResident(place, args);
    if (typeof answer === 'number') {
      process.exitCode = answer;
      return true;
    }
    if (answer === 'declined') return false;
  }
  if (mode === 'auto') {
    const { startResidentAtExit } = await import('@fleet/resident/autostart.js');
    startResidentAtExit(cliRoot);
  }
  return false;
}

/** How many of `args` name `controller <verb>` (`controller:<verb>` is oclif's other spelling). */
const controllerVerb = (verb) =>
  args[0] === `controller:${verb}` ? 1 : args[0] === 'controller' && args[1] === verb ? 2 : 0;
const serve = controllerVerb('serve');
const runtimeRun = controllerVerb('runtime-run');
const asksHelp = args.some((arg) => arg === '--help' || arg === '-h');
if (args.length === 1 && args[0] === '--version') {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(
    `${pkg.name}/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`,
  );
} else if (serve > 0 && !asksHelp) {
  const [{ runControllerServe }, { fileURLToPath }] = await Promise.all([
    import('@fleet/controller/serve'),
    import('node:url'),
  ]);
  await runControllerServe(args.slice(serve), {
    cliRoot: fileURLToPath(new URL('..', import.meta.url)),
  });
} else if (runtimeRun > 0 && !asksHelp) {
  const [{ runControllerRuntimeRun }, { fileURLToPath }] = await Promise.all([
    import('@fleet/controller/runtime-run'),
    import('node:url'),
  ]);
  await runControllerRuntimeRun(args.slice(runtimeRun), {
    cliRoot: fileURLToPath(new URL('..', import.meta.url)),
  });
} else if (!(await ranInResident())) {
  // V8's compile cache (Node.js 22.1+), in fleet's own private cache directory, before anything
  // large is imported: the code of oclif and core is then compiled once, not on every call
  // (src/compile-cache.ts).
  const { enableCompileCache } = await import('../dist/src/compile-cache.js');
  enableCompileCache();
  // oclif comes from inside @fleet/core's bundle (`@fleet/core/command`: one file for oclif and
  // what it uses, where @oclif/core is 160 modules; docs/adr/0011-core-ships-a-bundle.md). It
  // checks its own engines range when first imported, evaluating the semver package for it; the
  // CLI checks its own, stricter `engines.node` without one (src/engines.ts) and skips oclif's for
  // that one import.
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const userSetting = process.env.OCLIF_DISABLE_ENGINE_WARNING;
  if (!userSetting || !['1', 'true', 'y', 'yes'].includes(userSetting.toLowerCase())) {
    const { nodeEngineWarning } = await import('../dist/src/engines.js');
    const warning = nodeEngineWarning(pkg.engines.node, process.versions.node);
    if (warning !== undefined) process.emitWarning(warning);
    process.env.OCLIF_DISABLE_ENGINE_WARNING = 'true';
  }
  const { execute, settings } = await import('@fleet/core/command').finally(() => {
    if (userSetting === undefined) delete process.env.OCLIF_DISABLE_ENGINE_WARNING;
    else process.env.OCLIF_DISABLE_ENGINE_WARNING = userSetting;
  });
  // fleet and its plugins ship compiled JavaScript: never look for TypeScript sources to
  // transpile (a linked plugin, or NODE_ENV=test, would otherwise make oclif try — and warn).
  settings.enableAutoTranspile = false;
  await execute({ dir: import.meta.url });
}
