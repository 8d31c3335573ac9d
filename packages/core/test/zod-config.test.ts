/**
 * src/zod-config.ts: every schema fleet builds runs without zod's compiled fast path, so no parser
 * is generated from source at run time. Checked in a fresh process (this one has long loaded
 * core), which counts every `new Function` while it loads core, builds a schema through
 * `@fleet/core/zod` as a plugin does, and parses with both.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));
const sources = join(packageRoot, 'src');

const script = `
let generated = 0;
globalThis.Function = new Proxy(Function, {
  construct(target, args) { generated += 1; return Reflect.construct(target, args); },
});
const core = await import('@fleet/core');
const z = await import('@fleet/core/zod');
core.snapshotRequestSchema.parse({ files: [{ domain: 'files', path: '~/.gitconfig' }], backups: false });
z.strictObject({ name: z.string() }).parse({ name: 'plugin' });
process.stdout.write(String(generated));
`;

describe('zod configuration (src/zod-config.ts)', () => {
  it('builds no parser from generated source, for core or for a schema built through @fleet/core/zod', () => {
    const generated = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: packageRoot,
      encoding: 'utf8',
    });
    expect(generated).to.equal('0');
  });

  it('is imported first by every module of core that imports zod to build schemas', () => {
    const files = readdirSync(sources, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => join(sources, file));
    const builders = files.filter((file) =>
      /^import \* as z from 'zod';$/m.test(readFileSync(file, 'utf8')),
    );
    expect(builders.length).to.be.greaterThan(20);
    const unconfigured = builders.filter((file) => {
      const text = readFileSync(file, 'utf8');
      const configured = text.search(/^import '(\.\.?\/)+zod-config\.js';/m);
      return configured === -1 || configured > text.search(/^import \* as z from 'zod';$/m);
    });
    expect(unconfigured.map((file) => relative(packageRoot, file))).to.deep.equal([]);
  });
});
