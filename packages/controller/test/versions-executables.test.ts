/**
 * Which executable a shell runs, read without running it (versions/executable.ts), and what
 * `fleet version` makes of every probed tool along the PATH (issue 39 item 6): real shebang
 * scripts and real dangling symbolic links in a temp directory — a launcher whose
 * `#!/opt/py3.9/bin/python3` was removed, a venv whose python link dangles, `#!/usr/bin/env` of a
 * command that is not on PATH, nested interpreters — and the operator's verdict on each: `missing`
 * (not `current`) when the one that runs has lost its interpreter, and PATH shadowing for every
 * tool, not only `fleet`.
 */
import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versionItems, type VersionsResponse, type VersionsTool } from '@fleet/core';
import { ExecaProcessRunner } from '../src/context.js';
import {
  envCommand,
  inspectExecutable,
  parseShebang,
  type Inspection,
} from '../src/versions/executable.js';
import { collectTool } from '../src/versions/collect.js';

async function file(path: string, text: string, mode = 0o755): Promise<string> {
  await writeFile(path, text, { mode });
  await chmod(path, mode);
  return path;
}

describe('versions: the #! line', () => {
  const cases: [string, ReturnType<typeof parseShebang>][] = [
    ['#!/bin/sh\necho', { interpreter: '/bin/sh', argument: null }],
    ['#! /usr/bin/env  python3 \r\n', { interpreter: '/usr/bin/env', argument: 'python3' }],
    [
      '#!/usr/bin/env -S node --no-warnings\n',
      { interpreter: '/usr/bin/env', argument: '-S node --no-warnings' },
    ],
    ['#!\n', { interpreter: '', argument: null }],
    ['\u007fELF\u0002\u0001', null],
    ['echo no shebang\n', null],
  ];
  for (const [head, expected] of cases) {
    it(`reads ${JSON.stringify(head.slice(0, 24))}`, () => {
      expect(parseShebang(head)).to.deep.equal(expected);
    });
  }

  it('finds the command /usr/bin/env looks up past its options and assignments', () => {
    expect(envCommand('python3')).to.equal('python3');
    expect(envCommand('-S node --no-warnings')).to.equal('node');
    expect(envCommand('-i LANG=C perl -w')).to.equal('perl');
    expect(envCommand('-S')).to.equal(null);
    expect(envCommand(null)).to.equal(null);
  });
});

describe('versions: what a shell does with a file on PATH', () => {
  let tmp: string;
  let bin: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleet-exec-'));
    bin = join(tmp, 'bin');
    await mkdir(bin);
    await mkdir(join(tmp, 'venv', 'bin'), { recursive: true });
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  const gone = () => join(tmp, 'opt', 'py3.9', 'bin', 'python3');

  const table: {
    readonly name: string;
    readonly make: () => Promise<string>;
    readonly expected: () => Inspection;
  }[] = [
    {
      name: 'a script whose interpreter exists runs',
      make: () => file(join(bin, 'ok'), '#!/bin/sh\necho 1.0.0\n'),
      expected: () => ({ kind: 'runs' }),
    },
    {
      name: 'a file without #! runs (the kernel or the shell takes it as it is)',
      make: () => file(join(bin, 'plain'), 'echo 1.0.0\n'),
      expected: () => ({ kind: 'runs' }),
    },
    {
      name: 'a launcher whose #! interpreter was removed is dead: the shell stops there',
      make: () => file(join(bin, 'pytool'), `#!${gone()}\nimport sys\n`),
      expected: () => ({ kind: 'dead', detail: `its interpreter ${gone()} is gone` }),
    },
    {
      name: "a venv launcher whose python link dangles is dead, naming the link's target",
      make: async () => {
        await symlink(gone(), join(tmp, 'venv', 'bin', 'python3'));
        return file(join(bin, 'venvtool'), `#!${join(tmp, 'venv', 'bin', 'python3')}\n`);
      },
      expected: () => ({
        kind: 'dead',
        detail: `its interpreter ${join(tmp, 'venv', 'bin', 'python3')} is a broken symbolic link to ${gone()}`,
      }),
    },
    {
      name: '#!/usr/bin/env of a command not on PATH is dead',
      make: () => file(join(bin, 'envtool'), '#!/usr/bin/env no-such-python-xyz\n'),
      expected: () => ({
        kind: 'dead',
        detail: 'its interpreter no-such-python-xyz (through /usr/bin/env) is not on PATH',
      }),
    },
    {
      name: '#!/usr/bin/env -S of a command on PATH runs',
      make: async () => {
        await file(join(bin, 'interp'), '#!/bin/sh\nexec /bin/sh "$@"\n');
        return file(join(bin, 'envok'), '#!/usr/bin/env -S interp -e\necho 2.0.0\n');
      },
      expected: () => ({ kind: 'runs' }),
    },
    {
      name: 'an interpreter that is a script whose own interpreter is gone is dead',
      make: async () => {
        const middle = await file(join(tmp, 'middle'), `#!${gone()}\n`);
        return file(join(bin, 'nested'), `#!${middle}\n`);
      },
      expected: () => ({
        kind: 'dead',
        detail: `its interpreter ${join(tmp, 'middle')}: its interpreter ${gone()} is gone`,
      }),
    },
    {
      name: 'an interpreter without its execute bit is dead',
      make: async () => {
        const interp = await file(join(tmp, 'noexec-interp'), '#!/bin/sh\n', 0o644);
        return file(join(bin, 'noexec-user'), `#!${interp}\n`);
      },
      expected: () => ({
        kind: 'dead',
        detail: `its interpreter ${join(tmp, 'noexec-interp')} is not executable`,
      }),
    },
    {
      name: 'a dangling launcher link is passed over: the shell searches on',
      make: async () => {
        await symlink(join(tmp, 'removed', 'tool'), join(bin, 'dangling'));
        return join(bin, 'dangling');
      },
      expected: () => ({
        kind: 'skipped',
        detail: `a broken symbolic link to ${join(tmp, 'removed', 'tool')}`,
      }),
    },
    {
      name: 'a file without its execute bit is passed over',
      make: () => file(join(bin, 'noexec'), '#!/bin/sh\n', 0o644),
      expected: () => ({ kind: 'skipped', detail: 'not executable' }),
    },
    {
      name: 'a directory is passed over',
      make: async () => {
        await mkdir(join(bin, 'adir'));
        return join(bin, 'adir');
      },
      expected: () => ({ kind: 'skipped', detail: 'not a file' }),
    },
  ];
  for (const { name, make, expected } of table) {
    it(name, async () => {
      const path = await make();
      expect(await inspectExecutable(path, [bin, '/usr/bin', '/bin'], 'linux')).to.deep.equal(
        expected(),
      );
    });
  }
});

describe('versions: every probed tool along the PATH, and the operator’s verdict', () => {
  let tmp: string;
  let dirs: { local: string; venv: string; usr: string; old: string };
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleet-tools-'));
    dirs = {
      local: join(tmp, 'local-bin'),
      venv: join(tmp, 'venv-bin'),
      usr: join(tmp, 'usr-bin'),
      old: join(tmp, 'old-bin'),
    };
    for (const dir of Object.values(dirs)) await mkdir(dir);
    const removed = join(tmp, 'opt', 'py3.9', 'bin', 'python3');
    // The ADR's case: a launcher in ~/.local/bin whose Python was removed, first on PATH…
    await file(join(dirs.local, 'harness'), `#!${removed}\nfrom harness import main\n`);
    // …a dead launcher link too…
    await symlink(join(tmp, 'uninstalled', 'linter'), join(dirs.local, 'linter'));
    // …and the healthy installs later on PATH.
    await file(join(dirs.usr, 'harness'), '#!/bin/sh\necho "harness 0.30.0"\n');
    await file(join(dirs.usr, 'linter'), '#!/bin/sh\necho "linter 2.1.0"\n');
    // An older build first, a newer later; a tool whose only copy is a dead link.
    await file(join(dirs.old, 'fmt'), '#!/bin/sh\necho "fmt 1.0.0"\n');
    await file(join(dirs.usr, 'fmt'), '#!/bin/sh\necho "fmt 1.4.0"\n');
    await symlink(join(tmp, 'uninstalled', 'orphan'), join(dirs.venv, 'orphan'));
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  async function probe(name: string): Promise<VersionsTool> {
    return collectTool(name, {
      home: tmp,
      platform: 'linux',
      path: [dirs.local, dirs.venv, dirs.old, dirs.usr].join(':'),
      processes: new ExecaProcessRunner(tmp),
      timeoutMs: 5_000,
    });
  }

  function verdict(tool: VersionsTool) {
    const answer: VersionsResponse = {
      nodeId: 'node-01',
      package: '@fleet/cli',
      version: '1.0.0',
      build: { sha256: null, commit: null },
      platform: 'linux',
      tools: [tool],
      fleet: [],
      collectedAt: '2026-05-01T00:00:00.000Z',
    };
    return versionItems(answer, { canonicalVersion: '1.0.0', tools: [tool.name] })
      .filter((item) => item.kind === 'tool' || item.kind === 'shadowing')
      .map(({ kind, name, path, state, detail }) => ({ kind, name, path, state, detail }));
  }

  it('a launcher that lost its interpreter, first on PATH, is missing and shadows the healthy install', async () => {
    const tool = await probe('harness');
    const removed = join(tmp, 'opt', 'py3.9', 'bin', 'python3');
    expect(tool).to.deep.equal({
      name: 'harness',
      state: 'missing',
      path: join(dirs.local, 'harness'),
      detail: `${join(dirs.local, 'harness')} runs first and its interpreter ${removed} is gone`,
      onPath: [
        {
          path: join(dirs.local, 'harness'),
          runnable: false,
          version: null,
          detail: `its interpreter ${removed} is gone`,
        },
        {
          path: join(dirs.usr, 'harness'),
          runnable: true,
          version: '0.30.0',
          detail: 'harness 0.30.0',
        },
      ],
    });
    expect(verdict(tool)).to.deep.equal([
      {
        kind: 'tool',
        name: 'harness',
        path: join(dirs.local, 'harness'),
        state: 'missing',
        detail: `${join(dirs.local, 'harness')} runs first and its interpreter ${removed} is gone; also on PATH: ${join(dirs.usr, 'harness')} (0.30.0)`,
      },
      {
        kind: 'shadowing',
        name: 'harness',
        path: join(dirs.local, 'harness'),
        state: 'stale',
        detail: `${join(dirs.local, 'harness')} (its interpreter ${removed} is gone) comes first on PATH and hides ${join(dirs.usr, 'harness')} (0.30.0)`,
      },
    ]);
  });

  it('a dead launcher link is passed over: the later install runs and is current, the link is reported', async () => {
    const tool = await probe('linter');
    expect(tool).to.include({
      state: 'found',
      path: join(dirs.usr, 'linter'),
      version: 'linter 2.1.0',
    });
    const [item, shadowing, ...rest] = verdict(tool);
    expect(item).to.include({ kind: 'tool', state: 'current', path: join(dirs.usr, 'linter') });
    expect(item?.detail).to.equal(
      `runs ${join(dirs.usr, 'linter')}; also on PATH: ${join(dirs.local, 'linter')} (dead: a broken symbolic link to ${join(tmp, 'uninstalled', 'linter')})`,
    );
    expect(shadowing).to.include({
      kind: 'shadowing',
      path: join(dirs.local, 'linter'),
      state: 'stale',
    });
    expect(rest).to.deep.equal([]);
  });

  it('a tool whose only copy is a dangling link is missing, with the reason', async () => {
    const tool = await probe('orphan');
    expect(tool).to.deep.include({
      state: 'missing',
      detail: `none on PATH can run: ${join(dirs.venv, 'orphan')} is a broken symbolic link to ${join(tmp, 'uninstalled', 'orphan')}`,
    });
    expect(verdict(tool).map((i) => [i.kind, i.state])).to.deep.equal([['tool', 'missing']]);
  });

  it('an older build first on PATH runs, and shadows the newer one later', async () => {
    const tool = await probe('fmt');
    expect(tool).to.include({ state: 'found', path: join(dirs.old, 'fmt'), version: 'fmt 1.0.0' });
    expect(verdict(tool).map((i) => [i.kind, i.state, i.detail])).to.deep.equal([
      [
        'tool',
        'current',
        `runs ${join(dirs.old, 'fmt')}; also on PATH: ${join(dirs.usr, 'fmt')} (1.4.0)`,
      ],
      [
        'shadowing',
        'stale',
        `${join(dirs.old, 'fmt')} (1.0.0) comes first on PATH and hides the newer ${join(dirs.usr, 'fmt')} (1.4.0)`,
      ],
    ]);
  });

  it('a tool on no directory of the PATH is missing, without shadowing', async () => {
    const tool = await probe('absent-xyz');
    expect(tool).to.deep.equal({ name: 'absent-xyz', state: 'missing', onPath: [] });
    expect(verdict(tool)).to.deep.equal([
      {
        kind: 'tool',
        name: 'absent-xyz',
        path: undefined,
        state: 'missing',
        detail: "absent-xyz is not on the controller's PATH",
      },
    ]);
  });
});
