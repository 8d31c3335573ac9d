/**
 * The README's blocks run as written (issue 17): every ```sh block the README marks with
 * `<!-- readme-test -->` on a line before its fence is run, in the README's order, as a reader
 * pasting it would — bash with `set -euo pipefail`, a fresh HOME, a fresh working directory, no
 * stdin, `CI=true`, and `fleet` on the PATH as a two-line shim to this checkout's binary — and must
 * exit 0. The unmarked blocks are not run: `npm ci && npm test` and the demo (this suite is part of
 * `npm test`), the node-policy block (it writes into the real home of the node it is run on), the
 * release recipe (it names a repository by placeholder).
 *
 * The walkthroughs are run from the root of a checkout; they read only `examples/` of it (the
 * third-party plugin), so the working directory holds that, linked. Whatever labs the blocks
 * start are brought down after, however a block ended. It packs the runtime twice (`fleet lab
 * build`): a few minutes under load.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { requireSystemTools } from '@fleet/testkit';
import { FLEET_BIN, ROOT, fleet, tempDir } from '../src/fleet.js';

const MARK = '<!-- readme-test -->';

export interface MarkedBlock {
  /** 1-based line of the fence. */
  readonly line: number;
  readonly script: string;
}

/** The ```sh blocks of `markdown` marked to be run; a mark not followed by one is an error. */
export function markedBlocks(markdown: string): MarkedBlock[] {
  const lines = markdown.split('\n');
  const blocks: MarkedBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i]?.trim() !== MARK) continue;
    let fence = i + 1;
    while (fence < lines.length && lines[fence]?.trim() === '') fence += 1;
    if (lines[fence] !== '```sh') {
      throw new Error(`README line ${i + 1}: ${MARK} is not followed by a \`\`\`sh block`);
    }
    const end = lines.indexOf('```', fence + 1);
    if (end === -1) throw new Error(`README line ${fence + 1}: the block is not closed`);
    blocks.push({ line: fence + 1, script: lines.slice(fence + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

interface BlockRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

describe('README: the marked blocks run as written', function () {
  this.timeout(1_200_000);
  let scratch: { path: string; cleanup: () => Promise<void> };
  let work: string;
  let env: NodeJS.ProcessEnv;
  const runs = new Map<number, BlockRun>();

  before(async function () {
    requireSystemTools(
      this,
      [
        { command: 'bash', debianPackage: 'bash' },
        { command: 'git', debianPackage: 'git' },
        { command: 'tar', debianPackage: 'tar' },
        { command: 'sha256sum', debianPackage: 'coreutils' },
      ],
      "running the README's shell blocks",
    );
    scratch = await tempDir('fleet-readme-');
    const home = join(scratch.path, 'home');
    const bin = join(scratch.path, 'bin');
    work = join(scratch.path, 'work');
    await Promise.all([home, bin, work].map((dir) => mkdir(dir, { recursive: true })));
    await symlink(join(ROOT, 'examples'), join(work, 'examples'));
    const shim = join(bin, 'fleet');
    await writeFile(shim, `#!/bin/sh\nexec '${process.execPath}' '${FLEET_BIN}' "$@"\n`);
    await chmod(shim, 0o755);
    env = {
      PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
      HOME: home,
      CI: 'true',
      LANG: 'C.UTF-8',
      ...(process.env['TMPDIR'] === undefined ? {} : { TMPDIR: process.env['TMPDIR'] }),
      // a reader's git knows who they are; this HOME has no ~/.gitconfig
      GIT_AUTHOR_NAME: 'readme',
      GIT_AUTHOR_EMAIL: 'readme@example.invalid',
      GIT_COMMITTER_NAME: 'readme',
      GIT_COMMITTER_EMAIL: 'readme@example.invalid',
    };
  });

  after(async () => {
    if (scratch === undefined) return;
    // every lab a block started, down whether or not the block got to its own `lab down`
    for (const entry of await readdir(work, { withFileTypes: true }).catch(() => [])) {
      const dir = join(work, entry.name);
      if (!entry.isDirectory() || !existsSync(join(dir, 'lab.json'))) continue;
      const down = await fleet(['lab', 'down', '--dir', dir], { cwd: work });
      if (down.exitCode !== 0) console.error(`lab down --dir ${dir}: ${down.stderr}`);
    }
    await scratch.cleanup();
  });

  function runBlock(block: MarkedBlock): Promise<BlockRun> {
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', `set -euo pipefail\n${block.script}`], {
        cwd: work,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', reject);
      child.once('close', (exitCode) =>
        resolve({ exitCode, stdout: plain(stdout), stderr: plain(stderr) }),
      );
    });
  }

  // read when the suite is defined: mocha needs its tests before it runs any hook
  const blocks = markedBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));

  it('marks the walkthroughs, and nothing that is not meant to run here', () => {
    expect(blocks.length).to.equal(2);
    for (const block of blocks) {
      expect(block.script).not.to.match(/npm (ci|test)|scripts\/demo\.sh|--home ~/);
    }
  });

  for (const block of blocks) {
    const first = block.script.split('\n')[0] ?? '';
    it(`README line ${block.line}: ${first.slice(0, 60)} … exits 0`, async () => {
      const run = await runBlock(block);
      runs.set(block.line, run);
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).to.equal(0);
    });
  }

  it('the dotfile block: installed, then drift clean', () => {
    const run = [...runs.values()][0];
    if (run === undefined) throw new Error('the dotfile block did not run');
    expect(run.stdout).to.match(/installed/);
    expect(run.stdout).to.match(/1 host: 1 current, 0 drifted/);
  });

  it('the runtime block: bootstrapped, upgraded to the second build, rolled back, verified', () => {
    const run = [...runs.values()][1];
    if (run === undefined) throw new Error('the runtime block did not run');
    expect(run.stdout).to.match(/Packed @fleet\/cli \S+ in /);
    expect(run.stdout).to.match(
      /Packed @fleet\/cli 0\.2\.0-lab\.1 \(version set by the lab; the checkout is \S+\)/,
    );
    expect(run.stdout).to.match(/node-01: bootstrap \w+ accepted/);
    expect(run.stdout).to.match(
      /upgraded node-01: \S+ \(\w+\) -> 0\.2\.0-lab\.1 \(\w+\) under lab: accepted/,
    );
    expect(run.stdout).to.match(/rollback \w+ -> \w+: accepted/);
    expect(run.stdout).to.match(/Stopped \d+ lab process/);
  });
});
