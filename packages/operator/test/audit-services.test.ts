/**
 * The services behind `fleet audit verify|show` for a node home on this machine
 * (operator/audit/verify.ts, operator/audit/show.ts), without the CLI: what `--repair` and
 * `--release` answer for an intact, a torn and a broken log, the newest records `--limit` keeps,
 * and the verdicts' lines for a person. Through controllers, on a lab: test/e2e/audit.test.ts.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { escapeControl } from '@fleet/core';
import { nodeStateDir, type HostVerdict } from '../src/audit/log.js';
import { readHomeAudit } from '../src/audit/show.js';
import { verdictLines, verifyHomeAudit } from '../src/audit/verify.js';
import { chain } from './audit-chain.js';

const lines = chain(3);

describe("audit services: a node home's log, repaired and released on request", () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-audit-services-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  interface Case {
    readonly name: string;
    readonly log: string;
    readonly repair: boolean;
    readonly release: boolean;
    readonly ok: boolean;
    readonly repaired?: { readonly repaired: boolean; readonly detail: string };
    /** The seq released through; `null`: nothing released; absent: not asked. */
    readonly releasedSeq?: number | null;
  }
  const cases: Case[] = [
    {
      name: 'intact, nothing asked',
      log: `${lines.join('\n')}\n`,
      repair: false,
      release: false,
      ok: true,
    },
    {
      name: 'intact, --repair: nothing to repair',
      log: `${lines.join('\n')}\n`,
      repair: true,
      release: false,
      ok: true,
      repaired: { repaired: false, detail: 'the chain is intact: nothing to repair' },
    },
    {
      name: 'intact, --release: released through its head',
      log: `${lines.join('\n')}\n`,
      repair: false,
      release: true,
      ok: true,
      releasedSeq: 3,
    },
    {
      name: 'a torn last line, --repair: left to the controller',
      log: `${lines.join('\n')}\n{"seq":4`,
      repair: true,
      release: false,
      ok: false,
      repaired: {
        repaired: false,
        detail: 'only a torn last line: the controller moves it aside itself at its next start',
      },
    },
    {
      name: 'an edited record, --release: nothing released',
      log: `${[lines[0], (lines[1] ?? '').replace('record 2', 'record X'), lines[2]].join('\n')}\n`,
      repair: false,
      release: true,
      ok: false,
      releasedSeq: null,
    },
  ];

  cases.forEach((c, index) => {
    it(c.name, async () => {
      const home = join(root, `home-${index}`);
      await mkdir(nodeStateDir(home), { recursive: true });
      await writeFile(join(nodeStateDir(home), 'audit.jsonl'), c.log);
      const verified = await verifyHomeAudit({ home, repair: c.repair, release: c.release });
      expect(verified.verdict.ok).to.equal(c.ok);
      expect(verified.verdict.home).to.equal(home);
      if (c.repaired === undefined) expect(verified.repair).to.equal(undefined);
      else expect(verified.repair).to.deep.equal({ ...c.repaired, sealedInto: null });
      if (c.releasedSeq === undefined) {
        expect(verified).not.to.have.property('released');
      } else if (c.releasedSeq === null) {
        expect(verified.released).to.equal(null);
      } else {
        expect(verified.released?.seq).to.equal(c.releasedSeq);
        const written = JSON.parse(await readFile(verified.released?.path ?? '', 'utf8')) as {
          throughSeq: number;
        };
        expect(written.throughSeq).to.equal(c.releasedSeq);
      }
    });
  });

  it('audit show --home --limit 2: the newest two records', async () => {
    const home = join(root, 'home-show');
    await mkdir(nodeStateDir(home), { recursive: true });
    await writeFile(join(nodeStateDir(home), 'audit.jsonl'), `${lines.join('\n')}\n`);
    const shown = await readHomeAudit({ home, limit: 2 });
    expect(shown.home).to.equal(home);
    expect(shown.path).to.equal(join(nodeStateDir(home), 'audit.jsonl'));
    expect(shown.records.map((record) => record['seq'])).to.deep.equal([2, 3]);
  });
});

describe('audit verify: the verdicts for a person', () => {
  const head = { seq: 3, sha256: 'ab'.repeat(32) };
  const intact: HostVerdict = {
    host: 'node-01',
    status: 'intact',
    ok: true,
    records: 3,
    head,
    problems: [],
  };
  const cases: [name: string, verdicts: HostVerdict[], lines: string[]][] = [
    [
      'one intact log',
      [intact],
      [
        `node-01      intact  3 records, head seq 3 (${'ab'.repeat(6)})`,
        '1 log: 1 intact, 0 broken, 0 not read',
      ],
    ],
    [
      'a broken log names each problem; a host not read its error',
      [
        {
          ...intact,
          status: 'broken',
          ok: false,
          records: 1,
          head: null,
          problems: [{ seq: 2, line: 2, kind: 'edited', message: 'the hash differs' }],
        },
        {
          host: 'node-02',
          status: 'unreachable',
          ok: false,
          records: 0,
          head: null,
          problems: [],
          error: { code: 'HOST_UNREACHABLE', message: 'no answer', exitCode: 5 },
        },
      ],
      [
        'node-01      BROKEN  1 record',
        '    node-01: edited at seq 2 (line 2): the hash differs',
        'node-02      UNREACHABLE  no answer',
        '2 logs: 0 intact, 1 broken, 1 not read',
      ],
    ],
  ];
  for (const [name, verdicts, expected] of cases) {
    it(name, () => {
      expect(verdictLines(verdicts, escapeControl)).to.deep.equal(expected);
    });
  }
});
