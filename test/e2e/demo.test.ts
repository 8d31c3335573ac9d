/** The README's first command runs: scripts/demo.sh, end to end, on a lab in a temp dir. */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, labPids, pidAlive, tempDir } from '../src/fleet.js';

describe('scripts/demo.sh (the README demo)', function () {
  this.timeout(120_000);

  it('goes drift → plan → install → drift clean → adopt --promote → drift clean → audit verify, and stops its lab', async () => {
    const tmp = await tempDir('fleet-demo-');
    const lab = join(tmp.path, 'lab');
    try {
      const run = spawnSync('bash', [join(ROOT, 'scripts', 'demo.sh')], {
        cwd: ROOT,
        env: { ...process.env, FLEET_LAB_DIR: lab, OCLIF_SKIP_NEW_VERSION_CHECK: 'true' },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr + run.stdout).to.equal(0);
      const out = run.stdout;
      const order = [
        '3 hosts: 0 current, 3 drifted',
        'Plan for harness-policy on node-01',
        'installed harness-policy on node-01',
        '1 host: 1 current, 0 drifted',
        'diverged    file     ~/.claude/CLAUDE.md  (1 local line)',
        'Fleet-Adopted-From: node-01:~/.claude/CLAUDE.md',
        'Fleet-Promoted-To: domains/harness-policy/CLAUDE.md',
        '1 host: 1 current, 0 drifted',
        '3 logs: 3 intact, 0 broken',
      ];
      let at = 0;
      for (const line of order) {
        const found = out.indexOf(line, at);
        expect(found, `"${line}" after position ${at}`).to.be.greaterThan(-1);
        at = found;
      }
      // A line on stderr that announces something is followed by it (issue 35: lab up's "Use it
      // with …:" stood alone there, the exports it announced having gone to eval).
      const notes = run.stderr.split('\n');
      notes.forEach((line, i) => {
        if (line.trimEnd().endsWith(':')) {
          expect(notes[i + 1] ?? '', `the line after "${line}"`).to.match(/^\s+\S/);
        }
      });
      expect(existsSync(join(lab, 'lab.json'))).to.equal(true);
      for (const pid of labPids(lab)) expect(pidAlive(pid), `pid ${pid}`).to.equal(false);
    } finally {
      await tmp.cleanup();
    }
  });
});
