/**
 * Core builds each of its schemas when it is first used, not when core is loaded (docs/adr/0014):
 * a verb parses a handful of documents, and building all of core's schemas — 1,770 zod objects —
 * was the largest part of loading core. Checked in a fresh process that counts the schemas zod
 * constructs (zod's own per-schema hook, `postProcessor`, set before zod loads), and in the sources:
 * a schema at a module's top level is a `z.lazy`, but for the few that others extend.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));
const sources = join(packageRoot, 'src');

const script = `
let built = 0;
globalThis.__zod_globalConfig = { postProcessor: () => { built += 1; } };
const counts = {};
const core = await import('@fleet/core');
counts.loaded = built;
const request = { files: [{ domain: 'files', path: '~/.gitconfig' }], backups: false };
core.snapshotRequestSchema.parse(request);
counts.firstParse = built - counts.loaded;
core.snapshotRequestSchema.parse(request);
counts.secondParse = built - counts.loaded - counts.firstParse;
process.stdout.write(JSON.stringify(counts));
`;

/** Schemas other schemas build on with `.extend`, `.omit` or `.shape`: a z.lazy has none of them. */
const BASES = new Set([
  'applyDomainSchema',
  'errorBodySchema',
  'operationStatusResponseSchema',
  'pinnedPluginSchema',
  'planBodySchema',
  'receiptSchema',
]);

/** The names of `src`'s top-level constants built by a zod call other than `z.lazy`. */
function eagerSchemas(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const eager: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      let root = declaration.initializer;
      while (root && (ts.isCallExpression(root) || ts.isPropertyAccessExpression(root))) {
        if (ts.isCallExpression(root) && ts.isPropertyAccessExpression(root.expression)) {
          const { expression, name } = root.expression;
          if (ts.isIdentifier(expression) && expression.text === 'z') {
            if (!['lazy', 'config'].includes(name.text))
              eager.push(declaration.name.getText(source));
            break;
          }
        }
        root = root.expression;
      }
    }
  }
  return eager;
}

describe('core builds its schemas on first use (docs/adr/0014)', () => {
  it('builds few schemas while loading, a schema at its first parse, and nothing at the next', () => {
    const counts = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: packageRoot,
        encoding: 'utf8',
      }),
    ) as { loaded: number; firstParse: number; secondParse: number };
    // Loading builds one z.lazy per top-level schema and the bases: ~280 (all of them: 1,770).
    expect(counts.loaded).to.be.within(1, 400);
    expect(counts.firstParse).to.be.greaterThan(0);
    expect(counts.secondParse).to.equal(0);
  });

  it('defers every top-level schema of core with z.lazy, but the bases others extend', () => {
    const files = readdirSync(sources, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => join(sources, file));
    const eager = files.flatMap((file) =>
      eagerSchemas(file)
        .filter((name) => !BASES.has(name))
        .map((name) => `${relative(packageRoot, file)}: ${name}`),
    );
    expect(eager).to.deep.equal([]);
  });
});
