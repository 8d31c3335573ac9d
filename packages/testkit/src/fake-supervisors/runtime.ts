/**
 * A stand-in runtime for adapter tests: a generation directory whose `package/bin/run.js` is a tiny
 * node script accepting `controller serve --home H --node-id N [--port P] [--bind A]`. It records
 * its pid and argv in `<H>/.fake-runtime/<pid>.json`, listens on the port (so "accepts
 * connections" can be checked), and exits 0 on SIGTERM. `crash` exits 1 at once instead.
 */
import { mkdir, readdir, readFile, rm, symlink, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pointerTarget, runtimeLayout, type Platform } from '@fleet/core';

export type FakeRuntimeBehaviour = 'serve' | 'crash';

export function fakeRuntimeScript(behaviour: FakeRuntimeBehaviour = 'serve'): string {
  return `// fleet fake runtime (@fleet/testkit): behaves like "controller serve" for supervisor tests.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const args = process.argv.slice(2);
const flag = (name, fallback) => { const i = args.lastIndexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const home = flag('--home', process.env.HOME || '.');
const dir = path.join(home, '.fake-runtime');
fs.mkdirSync(dir, { recursive: true });
const record = path.join(dir, process.pid + '.json');
fs.writeFileSync(record + '.tmp', JSON.stringify({ pid: process.pid, argv: process.argv, script: __filename, nodeId: flag('--node-id', null) }));
fs.renameSync(record + '.tmp', record);
${
  behaviour === 'crash'
    ? 'process.exit(1);'
    : `const server = net.createServer((socket) => { socket.on('error', () => {}); socket.end('fake runtime\\n'); });
server.listen(Number(flag('--port', '0')), flag('--bind', '127.0.0.1'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
setInterval(() => {}, 60000);`
}
`;
}

/** Writes a fake generation `generations/<buildId>/package/bin/run.js` (not sealed, no manifest check). */
export async function writeFakeGeneration(
  home: string,
  buildId: string,
  options: { readonly platform?: Platform; readonly behaviour?: FakeRuntimeBehaviour } = {},
): Promise<string> {
  const layout = runtimeLayout(home, options.platform ?? 'linux');
  const dir = layout.generation(buildId);
  await mkdir(join(dir, 'package', 'bin'), { recursive: true });
  await writeFile(join(dir, 'package', 'bin', 'run.js'), fakeRuntimeScript(options.behaviour));
  await writeFile(
    join(dir, 'package', 'package.json'),
    `${JSON.stringify({ name: '@fleet/cli', version: '0.0.0-fake' })}\n`,
  );
  await writeFile(join(dir, 'generation.json'), `${JSON.stringify({ buildId, fake: true })}\n`);
  return dir;
}

/** Points `current` at a generation (symlink, or a pointer file for `win32`), replacing it atomically. */
export async function pointCurrentAt(
  home: string,
  buildId: string,
  platform: Platform = 'linux',
): Promise<void> {
  const layout = runtimeLayout(home, platform);
  const temp = `${layout.current}.fake-tmp`;
  await rm(temp, { force: true });
  if (platform === 'win32') await writeFile(temp, `${pointerTarget(buildId)}\n`);
  else await symlink(pointerTarget(buildId), temp);
  await rename(temp, layout.current);
}

export interface FakeRuntimeStart {
  readonly pid: number;
  readonly argv: readonly string[];
  readonly nodeId: string | null;
  readonly script: string;
}

/** Every start of a fake runtime under `home`, oldest first (by pid order of the records). */
export async function fakeRuntimeStarts(home: string): Promise<FakeRuntimeStart[]> {
  const dir = join(home, '.fake-runtime');
  const names = await readdir(dir).catch(() => [] as string[]);
  const starts: FakeRuntimeStart[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    starts.push(JSON.parse(await readFile(join(dir, name), 'utf8')) as FakeRuntimeStart);
  }
  return starts;
}

/** Waits until the fake runtime with `pid` recorded its start (it does so first thing). */
export async function waitForRuntimeStart(
  home: string,
  pid: number,
  timeoutMs = 10_000,
): Promise<FakeRuntimeStart> {
  for (let waited = 0; waited <= timeoutMs; waited += 20) {
    const start = (await fakeRuntimeStarts(home)).find((s) => s.pid === pid);
    if (start) return start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the fake runtime ${pid} recorded no start within ${timeoutMs} ms`);
}
