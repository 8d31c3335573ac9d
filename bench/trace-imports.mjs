// Records every module a Node.js process loads, for bench/cold-start.js.
//
//   FLEET_TRACE_IMPORTS=/tmp/trace.jsonl node --import ./bench/trace-imports.mjs packages/cli/bin/run.js --version
//
// Imported with `--import`, this file registers itself (module.register) as a loader-hooks module.
// Its `resolve` hook then runs, on the loader thread, for every ESM `import`/`import()` and appends
// one JSON line { kind: 'esm', specifier, parent, url } to the file named by FLEET_TRACE_IMPORTS.
// CommonJS `require()` does not go through ESM hooks on Node 20, so on exit the main thread also
// appends every module in `require.cache` as { kind: 'cjs', url }, then one { kind: 'evaluated',
// zod, builtins } line: whether zod ran, and Node's own modules. Without the variable it does nothing.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const traceFile = process.env.FLEET_TRACE_IMPORTS;

function record(entry) {
  appendFileSync(traceFile, `${JSON.stringify(entry)}\n`);
}

// On the main thread (the `--import` preload): install the hooks and the CommonJS exit dump. The
// loader thread imports this same file to get `resolve`; it must not register again.
if (traceFile && isMainThread) {
  register(import.meta.url);
  const requireCache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    for (const file of Object.keys(requireCache)) {
      record({ kind: 'cjs', url: pathToFileURL(file).href });
    }
    // Whether zod was evaluated at all (zod keeps its settings on globalThis from its first module
    // on).
    // And which of Node's own modules it compiled (`process.moduleLoadList`): an import can pull
    // in a large one unasked (node:http imported as an ES module loads undici on Node.js ≥ 22).
    record({
      kind: 'evaluated',
      zod: globalThis.__zod_globalConfig !== undefined,
      builtins: process.moduleLoadList
        .filter((name) => name.startsWith('NativeModule '))
        .map((name) => name.slice('NativeModule '.length)),
    });
  });
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (traceFile) {
    record({ kind: 'esm', specifier, parent: context.parentURL ?? null, url: result.url });
  }
  return result;
}
