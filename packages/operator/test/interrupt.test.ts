/**
 * Ctrl-C mid-upgrade (issue 17): a real process waiting on a node's transaction gets SIGINT, says
 * on stderr how to follow the transaction and exits 130 — the node goes on without it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { INTERRUPTED_EXIT, interruptedLine } from '../src/runtime/interrupt.js';

const MODULE = fileURLToPath(new URL('../src/runtime/interrupt.js', import.meta.url));

describe('Ctrl-C while a node works on a runtime transaction', function () {
  this.timeout(20_000);

  it('says how to follow it (fleet bootstrap status HOST) and exits 130', async () => {
    // The child waits "on the node" forever, and tells us when its handler is in place.
    const script = `
      const { followableOnInterrupt } = await import(${JSON.stringify(MODULE)});
      const waiting = followableOnInterrupt('node-01', () => new Promise(() => setInterval(() => {}, 1000)));
      process.stdout.write('waiting\\n');
      await waiting;
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString('utf8').includes('waiting')) resolve();
      });
      child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(INTERRUPTED_EXIT).and.to.equal(130);
    expect(stderr.trim()).to.equal(interruptedLine('node-01'));
    expect(stderr).to.contain('`fleet bootstrap status node-01`');
  });
});
