/**
 * The user's login PATH, learned by the node (versions/login-path.ts, issue 39 item 6): a real
 * `bash -l` reading a real profile in a temp home that prepends a directory (and prints a banner
 * around which the PATH must still be found), login shells that fail, hang or cannot start, the
 * cache's staleness rules, and a real controller probing its tools on the PATH its user's login
 * shell builds — where a launcher that lost its interpreter shadows a healthy install — unless
 * the node policy's `versions.path` names one.
 */
import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { versionsResponseSchema } from '@fleet/core';
import { SYSTEM_TOOLS, requireSystemTools, skipForEnvironment } from '@fleet/testkit';
import { ExecaProcessRunner } from '../src/context.js';
import {
  LOGIN_PATH_MAX_AGE_MS,
  LOGIN_PATH_RETRY_MS,
  LoginPathCache,
  currentAccount,
  learnLoginPath,
  markedLine,
  type Learned,
  type LearnInput,
} from '../src/versions/login-path.js';
import { startNode, type TestNode } from './support/node.js';

const M = 'fleet-path-0123';

describe('versions: the marked PATH line in a login shell’s output', () => {
  const cases: [string, string, string | null][] = [
    ['only the marked line', `${M}\n/a:/b\n${M}\n`, '/a:/b'],
    [
      'a profile’s banner before and a logout message after',
      `Welcome!\n${M}\n/a\n${M}\nbye\n`,
      '/a',
    ],
    ['CRLF line ends', `${M}\r\n/a\r\n${M}\r\n`, '/a'],
    ['no second marker', `${M}\n/a\n`, null],
    ['two lines between the markers', `${M}\n/a\n/b\n${M}\n`, null],
    ['an empty PATH', `${M}\n\n${M}\n`, null],
    ['no marker at all', '/a:/b\n', null],
  ];
  for (const [name, stdout, expected] of cases) {
    it(name, () => expect(markedLine(stdout, M)).to.equal(expected));
  }
});

describe('versions: learning the login PATH from a real login shell', function () {
  this.timeout(30_000);
  let home: string;
  const now = () => new Date('2026-05-01T12:00:00.000Z');
  before(function () {
    requireSystemTools(this, [SYSTEM_TOOLS.bash], 'the login PATH is learned from a real bash -l');
  });
  beforeEach(async () => {
    home = await realpath(await mkdtemp(join(tmpdir(), 'fleet-login-')));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  const input = (shell: string | null, timeoutMs = 10_000): LearnInput => ({
    platform: shell === null ? 'win32' : 'linux',
    home,
    account: { username: 'someone', shell },
    processes: new ExecaProcessRunner(home),
    timeoutMs,
    now,
  });

  it('is what bash -l builds from the profile in the home, past what the profile prints', async () => {
    await writeFile(
      join(home, '.bash_profile'),
      [
        'echo "Welcome, $USER"',
        'PATH="$HOME/login-bin:$PATH"; export PATH',
        'env > "$HOME/login-env"',
      ].join('\n'),
    );
    process.env['FLEET_LOGIN_LEAK'] = 'leaked';
    let learned: Learned;
    try {
      learned = await learnLoginPath(input('/bin/bash'));
    } finally {
      delete process.env['FLEET_LOGIN_LEAK'];
    }
    if (learned.source !== 'login-shell') expect.fail(learned.detail);
    expect(learned.path.split(':')[0]).to.equal(join(home, 'login-bin'));
    expect(learned).to.include({
      learnedAt: now().toISOString(),
      detail: 'learned from /bin/bash -l',
    });
    // The login shell got a minimal environment: the user's, never the controller's.
    const env = await readFile(join(home, 'login-env'), 'utf8');
    expect(env)
      .to.contain(`HOME=${home}\n`)
      .and.contain('USER=someone\n')
      .and.contain('SHELL=/bin/bash\n');
    expect(env).to.not.contain('FLEET_LOGIN_LEAK');
  });

  const failures: {
    readonly name: string;
    readonly shell: string | null;
    readonly profile?: string;
    readonly timeoutMs?: number;
    readonly detail: string;
  }[] = [
    {
      name: 'a shell that refuses logins (its exit status)',
      shell: '/bin/false',
      detail: "the login shell /bin/false -l exited 1: the controller's PATH is used",
    },
    {
      name: 'a shell that does not exist',
      shell: '/nonexistent/shell',
      detail:
        "the login shell /nonexistent/shell -l could not be started: the controller's PATH is used",
    },
    {
      name: 'a profile that hangs (the bounded time)',
      shell: '/bin/bash',
      profile: 'exec /bin/sleep 10',
      timeoutMs: 500,
      detail:
        "the login shell /bin/bash -l did not answer within 500 ms: the controller's PATH is used",
    },
    {
      name: 'a profile that leaves no absolute directory on PATH',
      shell: '/bin/bash',
      profile: 'PATH=bin:.; export PATH; printenv() { echo "$PATH"; }',
      detail:
        "the login shell /bin/bash -l has no absolute directory on its PATH: the controller's PATH is used",
    },
    {
      name: 'Windows where reg cannot be run (no reg.exe on this PATH)',
      shell: null,
      detail:
        "reg query HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment /v Path gave no Path fleet could read: the controller's PATH is used",
    },
  ];
  for (const { name, shell, profile, timeoutMs, detail } of failures) {
    it(`falls back to the controller's PATH, saying why: ${name}`, async () => {
      if (profile !== undefined) await writeFile(join(home, '.bash_profile'), `${profile}\n`);
      expect(await learnLoginPath(input(shell, timeoutMs))).to.deep.equal({
        source: 'controller',
        detail,
      });
    });
  }
});

describe('versions: how stale a learned login PATH may get', () => {
  let at = 0;
  const clock = { now: () => new Date(at), monotonicMs: () => at };
  const learned = (path: string): Learned => ({
    source: 'login-shell',
    path,
    learnedAt: new Date(at).toISOString(),
    detail: 'learned from /bin/bash -l',
  });

  it('is learned once, shared by concurrent reads, and learned again after its maximum age', async () => {
    at = 0;
    let runs = 0;
    const cache = new LoginPathCache(() => Promise.resolve(learned(`/run-${++runs}`)), clock);
    const [a, b] = await Promise.all([cache.get(), cache.get()]);
    expect([a, b].map((l) => l.source === 'login-shell' && l.path)).to.deep.equal([
      '/run-1',
      '/run-1',
    ]);
    at = LOGIN_PATH_MAX_AGE_MS - 1;
    expect(await cache.get()).to.include({ path: '/run-1' });
    at = LOGIN_PATH_MAX_AGE_MS;
    expect(await cache.get()).to.include({ path: '/run-2' });
    expect(runs).to.equal(2);
  });

  it('tries a failed learning again sooner, after the retry interval', async () => {
    at = 0;
    let runs = 0;
    const cache = new LoginPathCache(() => {
      runs += 1;
      return Promise.resolve<Learned>(
        runs === 1 ? { source: 'controller', detail: 'the login shell exited 1' } : learned('/ok'),
      );
    }, clock);
    expect(await cache.get()).to.include({ source: 'controller' });
    at = LOGIN_PATH_RETRY_MS - 1;
    expect(await cache.get()).to.include({ source: 'controller' });
    at = LOGIN_PATH_RETRY_MS;
    expect(await cache.get()).to.include({ source: 'login-shell', path: '/ok' });
  });
});

describe('versions: a real controller probes tools on its user’s login PATH', function () {
  this.timeout(60_000);
  let node: TestNode;
  let home: string;
  const policy = { domains: { fixture: {} }, versions: { tools: ['harness', 'greet'] } };

  before(async function () {
    // The controller runs its own user's login shell (the passwd entry's): the profiles below are
    // the ones bash, sh (dash) and zsh read for a login shell.
    const shell = currentAccount('linux').shell ?? '';
    if (!['bash', 'sh', 'dash', 'zsh'].includes(basename(shell))) {
      skipForEnvironment(
        this,
        `the test user's login shell ${shell} reads none of the profiles written here`,
      );
    }
    node = await startNode({ policy });
    home = await realpath(node.home);
    const login = join(home, 'login-bin');
    const system = join(home, 'system-bin');
    await mkdir(login);
    await mkdir(system);
    // ~/login-bin first on the login PATH: the ADR's launcher whose Python was removed…
    const harness = join(login, 'harness');
    await writeFile(harness, `#!${join(home, 'opt', 'py3.9', 'bin', 'python3')}\n`);
    await chmod(harness, 0o755);
    // …shadowing a healthy install later on it; and a tool only the login PATH has.
    for (const [dir, name, line] of [
      [system, 'harness', 'harness 0.30.0'],
      [login, 'greet', 'greet 1.2.3'],
    ] as const) {
      await writeFile(join(dir, name), `#!/bin/sh\necho "${line}"\n`);
      await chmod(join(dir, name), 0o755);
    }
    const profile = `echo "profile banner"\nPATH="${login}:$PATH:${system}"; export PATH\n`;
    for (const file of ['.bash_profile', '.profile', '.zprofile']) {
      await writeFile(join(home, file), profile);
    }
  });
  after(() => node?.dispose());

  it('learns the login PATH from its login shell and probes the tools on it', async () => {
    const token = await node.issue(['versions:read']);
    const answer = await node.call('/v1/versions', {
      token,
      body: { tools: ['harness', 'greet'] },
    });
    expect(answer.status, answer.text).to.equal(200);
    const body = versionsResponseSchema.parse(answer.body);
    expect(body.loginPath?.source, body.loginPath?.detail).to.equal('login-shell');
    expect(body.loginPath?.directories[0]).to.equal(join(home, 'login-bin'));
    expect(body.loginPath?.directories.at(-1)).to.equal(join(home, 'system-bin'));
    expect(body.loginPath?.learnedAt).to.be.a('string');
    const [harness, greet] = body.tools;
    expect(harness).to.deep.include({
      name: 'harness',
      state: 'missing',
      path: join(home, 'login-bin', 'harness'),
    });
    expect(
      harness?.state === 'missing' && harness.onPath?.map((e) => [e.path, e.runnable]),
    ).to.deep.equal([
      [join(home, 'login-bin', 'harness'), false],
      [join(home, 'system-bin', 'harness'), true],
    ]);
    expect(greet).to.include({
      state: 'found',
      path: join(home, 'login-bin', 'greet'),
      version: 'greet 1.2.3',
    });
  });

  it("probes on the node policy's versions.path instead when it names one", async () => {
    await node.setPolicy({
      ...policy,
      versions: { ...policy.versions, path: [join(home, 'system-bin')] },
    });
    try {
      const token = await node.issue(['versions:read']);
      const answer = await node.call('/v1/versions', {
        token,
        body: { tools: ['harness', 'greet'] },
      });
      const body = versionsResponseSchema.parse(answer.body);
      expect(body.loginPath).to.deep.equal({
        source: 'policy',
        directories: [join(home, 'system-bin')],
        learnedAt: null,
        detail: 'versions.path in ~/.config/fleet/node-policy.yaml',
      });
      expect(body.tools.map((t) => [t.name, t.state])).to.deep.equal([
        ['harness', 'found'],
        ['greet', 'missing'],
      ]);
    } finally {
      await node.setPolicy(policy);
    }
  });
});
