/**
 * The PATH on the user's own terms where a login shell does not tell all of it
 * (versions/user-path.ts, issue 39 item 5): the exact output shapes of `launchctl getenv` and
 * `reg query` read by pure parsers (anything else refused), REG_EXPAND_SZ expanded as
 * ExpandEnvironmentStrings does, and the learning wired through the testkit's fake `launchctl`
 * and fake `reg` — a Mac's launchd PATH after its login shell's, a Windows user's PATH as a logon
 * builds it from the machine's and the user's registry values.
 */
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  SYSTEM_TOOLS,
  createFakeSupervisorHost,
  requireSystemTools,
  type FakeSupervisorHost,
} from '@fleet/testkit';
import { learnLoginPath, type LearnInput } from '../src/versions/login-path.js';
import {
  MACHINE_ENVIRONMENT_KEY,
  USER_ENVIRONMENT_KEY,
  expandEnvironmentStrings,
  joinPaths,
  parseLaunchctlGetenv,
  parseRegQuery,
} from '../src/versions/user-path.js';

const now = () => new Date('2026-05-01T12:00:00.000Z');

describe('versions: what launchctl getenv PATH printed', () => {
  const cases: [string, string, string | null][] = [
    [
      'a value and its newline (launchctl(1) getenv)',
      '/opt/gui/bin:/usr/bin\n',
      '/opt/gui/bin:/usr/bin',
    ],
    ['nothing: no PATH set in the domain', '', null],
    ['a bare newline', '\n', null],
    ['two lines: not an answer', '/a\n/b\n', null],
  ];
  for (const [name, stdout, expected] of cases) {
    it(name, () => expect(parseLaunchctlGetenv(stdout)).to.equal(expected));
  }
});

describe('versions: what reg query KEY /v Path printed', () => {
  const user = (line: string) => `\r\n${USER_ENVIRONMENT_KEY}\r\n${line}\r\n\r\n`;
  const cases: [string, string, { type: string; data: string } | null][] = [
    [
      "the user's Path as reg.exe prints it (REG_EXPAND_SZ)",
      user(
        '    Path    REG_EXPAND_SZ    %USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools',
      ),
      {
        type: 'REG_EXPAND_SZ',
        data: '%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools',
      },
    ],
    [
      'a REG_SZ, the name in another case',
      user('    PATH    REG_SZ    C:\\bin'),
      { type: 'REG_SZ', data: 'C:\\bin' },
    ],
    ['an empty value', user('    Path    REG_SZ    '), { type: 'REG_SZ', data: '' }],
    ['another value', user('    TEMP    REG_SZ    C:\\tmp'), null],
    ['a type that is not a string', user('    Path    REG_MULTI_SZ    C:\\a\\0C:\\b'), null],
    ['another key', `\r\n${MACHINE_ENVIRONMENT_KEY}\r\n    Path    REG_SZ    C:\\bin\r\n`, null],
    ['extra lines', `${user('    Path    REG_SZ    C:\\bin')}    Other    REG_SZ    x\r\n`, null],
    ['tabs instead of reg.exe’s four spaces', user('\tPath\tREG_SZ\tC:\\bin'), null],
    ['nothing', '', null],
  ];
  for (const [name, stdout, expected] of cases) {
    it(name, () =>
      expect(parseRegQuery(stdout, USER_ENVIRONMENT_KEY, 'Path')).to.deep.equal(expected),
    );
  }
});

describe('versions: %NAME% expanded as ExpandEnvironmentStrings does', () => {
  const env = { SystemRoot: 'C:\\Windows', USERPROFILE: 'C:\\Users\\me' };
  const cases: [string, string, string][] = [
    ['a defined name', '%SystemRoot%\\system32', 'C:\\Windows\\system32'],
    ['a name in another case', '%systemroot%;%UserProfile%\\bin', 'C:\\Windows;C:\\Users\\me\\bin'],
    ['an undefined name stays as written', '%NOPE%\\bin;C:\\x', '%NOPE%\\bin;C:\\x'],
    ['a lone percent sign', 'C:\\100%\\bin', 'C:\\100%\\bin'],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => expect(expandEnvironmentStrings(text, env)).to.equal(expected));
  }
});

describe('versions: two PATHs joined, the first winning', () => {
  it('keeps the first PATH’s order and adds only what it lacks', () => {
    expect(joinPaths('/a:/b', '/b:/c:', ':')).to.equal('/a:/b:/c');
  });
  it('compares Windows directories without regard to case', () => {
    expect(joinPaths('C:\\Windows;C:\\bin', 'c:\\BIN;D:\\x', ';')).to.equal(
      'C:\\Windows;C:\\bin;D:\\x',
    );
  });
});

describe('versions: the PATH learned through the fake launchctl and the fake reg', function () {
  this.timeout(30_000);
  let host: FakeSupervisorHost;
  let home: string;
  afterEach(async () => {
    await host?.dispose();
    if (home) await rm(home, { recursive: true, force: true });
  });
  const input = (platform: LearnInput['platform'], shell: string | null): LearnInput => ({
    platform,
    home,
    account: { username: 'someone', shell },
    processes: host.processes,
    timeoutMs: 10_000,
    now,
    env: { SystemRoot: 'C:\\Windows', USERPROFILE: 'C:\\Users\\me' },
  });

  it("on a Mac: the login shell's PATH first, then launchctl getenv PATH's other directories", async function () {
    requireSystemTools(this, [SYSTEM_TOOLS.bash], 'the login PATH is learned from a real bash -l');
    host = await createFakeSupervisorHost({ platform: 'darwin' });
    home = await realpath(await mkdtemp(join(tmpdir(), 'fleet-user-path-')));
    await writeFile(join(home, '.bash_profile'), 'PATH="/opt/homebrew/bin:$PATH"; export PATH\n');
    const set = await host.processes.run({
      command: 'launchctl',
      args: ['setenv', 'PATH', '/opt/gui/bin:/usr/bin'],
    });
    expect(set.exitCode, set.stderr).to.equal(0);
    const learned = await learnLoginPath(input('darwin', '/bin/bash'));
    expect(learned).to.deep.include({
      source: 'login-shell',
      detail: 'learned from /bin/bash -l, then launchctl getenv PATH',
    });
    const path = (learned as { path: string }).path.split(':');
    expect(path[0]).to.equal('/opt/homebrew/bin');
    expect(path.at(-1)).to.equal('/opt/gui/bin');
    expect(path.filter((dir) => dir === '/usr/bin')).to.have.length(1);
  });

  it('on a Mac whose launchd sets no PATH: the login shell’s alone', async function () {
    requireSystemTools(this, [SYSTEM_TOOLS.bash], 'the login PATH is learned from a real bash -l');
    host = await createFakeSupervisorHost({ platform: 'darwin' });
    home = await realpath(await mkdtemp(join(tmpdir(), 'fleet-user-path-')));
    const learned = await learnLoginPath(input('darwin', '/bin/bash'));
    expect(learned).to.deep.include({ source: 'login-shell', detail: 'learned from /bin/bash -l' });
  });

  it("on Windows: the machine's Path, then the user's, REG_EXPAND_SZ expanded", async () => {
    host = await createFakeSupervisorHost({ platform: 'win32' });
    home = await realpath(await mkdtemp(join(tmpdir(), 'fleet-user-path-')));
    await host.setRegistryValue(
      'HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment',
      'Path',
      'REG_EXPAND_SZ',
      '%SystemRoot%\\system32;%SystemRoot%;C:\\Program Files\\Git\\cmd',
    );
    await host.setRegistryValue(
      'HKCU\\Environment',
      'Path',
      'REG_EXPAND_SZ',
      '%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\windows\\SYSTEM32',
    );
    expect(await learnLoginPath(input('win32', null))).to.deep.equal({
      source: 'login-shell',
      path: 'C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\Git\\cmd;C:\\Users\\me\\AppData\\Local\\Microsoft\\WindowsApps',
      learnedAt: '2026-05-01T12:00:00.000Z',
      detail:
        "learned from the registry: the machine's Path, then HKEY_CURRENT_USER\\Environment's",
    });
  });

  it('on Windows with no Path of the user’s own: the machine’s alone', async () => {
    host = await createFakeSupervisorHost({ platform: 'win32' });
    home = await realpath(await mkdtemp(join(tmpdir(), 'fleet-user-path-')));
    await host.setRegistryValue(MACHINE_ENVIRONMENT_KEY, 'Path', 'REG_SZ', 'C:\\Windows\\system32');
    const learned = await learnLoginPath(input('win32', null));
    expect(learned).to.deep.include({ source: 'login-shell', path: 'C:\\Windows\\system32' });
  });

  it("on Windows with no Path in the registry: the controller's PATH, saying why", async () => {
    host = await createFakeSupervisorHost({ platform: 'win32' });
    home = await realpath(await mkdtemp(join(tmpdir(), 'fleet-user-path-')));
    expect(await learnLoginPath(input('win32', null))).to.deep.equal({
      source: 'controller',
      detail: "the registry's Path has no absolute directory: the controller's PATH is used",
    });
  });
});
