/**
 * The resident operator process's parts (docs/resident.md), each on its own: the socket's frames,
 * which verbs it runs, which directories it trusts, a call's process scope, and the server with a
 * stand-in for oclif's `execute` (the real CLI through a resident is test/integration's
 * resident.test.ts).
 */
import { expect } from 'chai';
import { linkSync, mkdtempSync, mkdirSync, realpathSync, rmSync, type Stats } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enterCall, replaceEnv } from '../src/call-scope.js';
import {
  Frame,
  FrameReader,
  MAX_FRAME_BYTES,
  encodeFrame,
  type CallRequest,
  type DecodedFrame,
} from '../src/frames.js';
import { callResident } from '../src/client.js';
import {
  fnv1a64,
  privateDirProblem,
  residentMode,
  residentPlace,
  residentVerb,
  runtimeDirProblem,
  socketProblem,
} from '../src/place.js';
import { samePluginDirs, serveResident, type ResidentOptions } from '../src/server.js';

const UID = 1000;

function stats(kind: 'dir' | 'file' | 'link' | 'socket', uid: number, mode: number): Stats {
  return {
    uid,
    mode,
    isDirectory: () => kind === 'dir',
    isSymbolicLink: () => kind === 'link',
    isSocket: () => kind === 'socket',
  } as Stats;
}

describe('the resident operator process: its parts', () => {
  describe('frames', () => {
    it('round-trips frames split anywhere across chunks', () => {
      const bytes = Buffer.concat([
        encodeFrame(Frame.accepted),
        encodeFrame(Frame.stdout, Buffer.from([0, 255, 10])),
        encodeFrame(Frame.exit, JSON.stringify({ code: 3 })),
      ]);
      for (let cut = 0; cut <= bytes.length; cut += 1) {
        const reader = new FrameReader();
        const frames: DecodedFrame[] = [
          ...reader.push(bytes.subarray(0, cut)),
          ...reader.push(bytes.subarray(cut)),
        ];
        expect(frames.map((f) => f.type)).to.deep.equal([Frame.accepted, Frame.stdout, Frame.exit]);
        expect([...(frames[1]?.payload ?? [])]).to.deep.equal([0, 255, 10]);
        expect(JSON.parse(String(frames[2]?.payload))).to.deep.equal({ code: 3 });
      }
    });

    it('refuses a frame over the bound before reading it', () => {
      const head = Buffer.alloc(5);
      head.writeUInt8(Frame.call, 0);
      head.writeUInt32BE(MAX_FRAME_BYTES + 1, 1);
      expect(() => new FrameReader().push(head)).to.throw(/over the bound/);
    });
  });

  describe('residentVerb: the verbs a resident runs', () => {
    const cases: [string[], boolean][] = [
      [['drift'], true],
      [['drift', '--host', 'a', '--json'], true],
      [['status'], true],
      [['apply', '--confirm'], true],
      [['config', 'install', 'h', 'files'], true],
      [['config:install', 'h', 'files'], true],
      [['config', 'plan', 'h'], true],
      [['config', 'export', 'h', '~/.x'], false], // a file's bytes on stdout: not worth the risk
      [['config', 'adopt', 'h'], false],
      [['bootstrap', 'receive'], false], // reads stdin
      [['lab', 'up'], false],
      [['resident', 'start'], false],
      [['plugins', 'install', 'x'], false],
      [[], false],
      [['--version'], false],
    ];
    for (const [argv, runs] of cases) {
      it(`${argv.join(' ') || '(nothing)'}: ${runs ? 'runs there' : 'runs in its own process'}`, () => {
        expect(residentVerb(argv)).to.equal(runs);
      });
    }
  });

  describe('FLEET_RESIDENT: whether a call uses a resident, and may start one', () => {
    const cases: [string | undefined, string, string | undefined][] = [
      // No daemon on the operator seat unless the operator asks for one (contract §1.1).
      [undefined, 'manual', undefined],
      ['', 'manual', undefined],
      ['manual', 'manual', undefined],
      ['auto', 'auto', undefined],
      ['off', 'off', undefined],
      // A typo never starts a process the operator meant to forbid.
      ['on', 'off', 'FLEET_RESIDENT is "on", not auto, manual or off: taken as off'],
      ['OFF', 'off', 'FLEET_RESIDENT is "OFF", not auto, manual or off: taken as off'],
    ];
    for (const [value, mode, problem] of cases) {
      it(`${value === undefined ? 'unset' : JSON.stringify(value)} → ${mode}`, () => {
        expect(residentMode(value)).to.deep.equal(problem ? { mode, problem } : { mode });
      });
    }
  });

  describe('where it listens', () => {
    const inputs = {
      uid: UID,
      cliRoot: '/opt/fleet',
      nodeVersion: 'v20.20.2',
      execPath: '/usr/bin/node',
    };

    it('in $XDG_RUNTIME_DIR/fleet, else a per-user directory of the temporary directory', () => {
      const run = residentPlace({ ...inputs, env: { XDG_RUNTIME_DIR: '/run/user/1000' } });
      expect(run.dir).to.equal('/run/user/1000/fleet');
      expect(run.socket).to.match(/^\/run\/user\/1000\/fleet\/operator-[0-9a-f]{16}\.sock$/);
      expect(residentPlace({ ...inputs, env: {} }).dir).to.equal(join(tmpdir(), 'fleet-1000'));
      // A relative value is no runtime directory (the spec wants an absolute path).
      expect(residentPlace({ ...inputs, env: { XDG_RUNTIME_DIR: 'run' } }).dir).to.equal(
        join(tmpdir(), 'fleet-1000'),
      );
    });

    it('names a socket with FNV-1a 64 (its published test vectors)', () => {
      expect(fnv1a64('')).to.equal('cbf29ce484222325');
      expect(fnv1a64('a')).to.equal('af63dc4c8601ec8c');
      expect(fnv1a64('foobar')).to.equal('85944171f73967e8');
    });

    it('one socket per CLI and Node.js: another install or another node never meets it', () => {
      const base = residentPlace({ ...inputs, env: {} }).socket;
      expect(residentPlace({ ...inputs, env: {}, cliRoot: '/opt/fleet2' }).socket).not.to.equal(
        base,
      );
      expect(residentPlace({ ...inputs, env: {}, nodeVersion: 'v24.0.0' }).socket).not.to.equal(
        base,
      );
      expect(residentPlace({ ...inputs, env: {}, execPath: '/opt/node' }).socket).not.to.equal(
        base,
      );
      expect(residentPlace({ ...inputs, env: {} }).socket).to.equal(base);
    });

    const dirs: [string, Stats, string | undefined][] = [
      ['a 0700 directory of the user', stats('dir', UID, 0o40700), undefined],
      ['one group may enter', stats('dir', UID, 0o40750), 'has mode 750, not 700'],
      ['anyone may enter', stats('dir', UID, 0o40777), 'has mode 777, not 700'],
      ['another user’s', stats('dir', 0, 0o40700), 'belongs to uid 0, not 1000'],
      ['a symbolic link', stats('link', UID, 0o120777), 'is a symbolic link'],
      ['a file', stats('file', UID, 0o100600), 'is not a directory'],
    ];
    for (const [what, given, problem] of dirs) {
      it(`the directory: ${what} → ${problem ?? 'private'}`, () => {
        expect(privateDirProblem(given, UID)).to.equal(problem);
      });
    }

    it('the socket must be a socket of the user', () => {
      expect(socketProblem(stats('socket', UID, 0o140600), UID)).to.equal(undefined);
      expect(socketProblem(stats('socket', 0, 0o140600), UID)).to.equal(
        'belongs to uid 0, not 1000',
      );
      expect(socketProblem(stats('file', UID, 0o100600), UID)).to.equal('is not a socket');
    });

    it('$XDG_RUNTIME_DIR must be the user’s own (sudo -E keeps the invoking user’s)', () => {
      const runtime = realpathSync(mkdtempSync(join(tmpdir(), 'fleet-runtime-')));
      try {
        const own = process.getuid?.() ?? -1;
        expect(runtimeDirProblem({ XDG_RUNTIME_DIR: runtime }, own)).to.equal(undefined);
        expect(runtimeDirProblem({ XDG_RUNTIME_DIR: runtime }, own + 1)).to.equal(
          `XDG_RUNTIME_DIR ${runtime} belongs to uid ${own}, not ${own + 1}`,
        );
        expect(runtimeDirProblem({ XDG_RUNTIME_DIR: join(runtime, 'gone') }, own)).to.equal(
          `XDG_RUNTIME_DIR ${join(runtime, 'gone')} does not exist`,
        );
        // Unset or relative: the place is under the temporary directory, which has its own check.
        expect(runtimeDirProblem({}, own)).to.equal(undefined);
        expect(runtimeDirProblem({ XDG_RUNTIME_DIR: 'run' }, own)).to.equal(undefined);
      } finally {
        rmSync(runtime, { recursive: true, force: true });
      }
    });

    it('a call with another home or other oclif directories is not the resident’s to run', () => {
      const own = { HOME: '/home/a', FLEET_DATA_DIR: '/d', PATH: '/bin' };
      expect(samePluginDirs({ ...own, PATH: '/usr/bin', FLEET_REPO: '/r' }, own)).to.equal(true);
      expect(samePluginDirs({ ...own, HOME: '/home/b' }, own)).to.equal(false);
      expect(samePluginDirs({ ...own, FLEET_DATA_DIR: '/e' }, own)).to.equal(false);
      expect(samePluginDirs({ ...own, XDG_DATA_HOME: '/x' }, own)).to.equal(false);
    });
  });

  describe('enterCall: the process is the caller’s for one call', () => {
    let work: string;
    beforeEach(() => {
      work = realpathSync(mkdtempSync(join(tmpdir(), 'fleet-resident-scope-')));
    });
    afterEach(() => rmSync(work, { recursive: true, force: true }));

    it('sets environment, directory, umask, argv and output, and puts them all back', () => {
      const before = {
        env: { ...process.env },
        cwd: process.cwd(),
        umask: process.umask(),
        argv: process.argv,
        exitListeners: process.listenerCount('exit'),
      };
      const request: CallRequest = {
        argv: ['drift', '--json'],
        env: { PATH: process.env['PATH'] ?? '', FLEET_REPO: '/r', ONLY_IN_CALL: 'yes' },
        cwd: work,
        umask: 0o077,
        stdoutIsTTY: true,
        stderrIsTTY: false,
        columns: 123,
      };
      const written: [number, string][] = [];
      const seen: Record<string, unknown> = {};
      let exitListenerRan: number | undefined;
      const leave = enterCall(
        request,
        '/opt/fleet/bin/run.js',
        (fd, bytes) => written.push([fd, bytes.toString('utf8')]),
        () => undefined,
      );
      try {
        Object.assign(seen, {
          repo: process.env['FLEET_REPO'],
          home: process.env['HOME'],
          cwd: process.cwd(),
          umask: process.umask(),
          argv: process.argv.slice(1),
          stdoutTTY: process.stdout.isTTY,
          stderrTTY: process.stderr.isTTY,
          columns: process.stdout.columns,
        });
        process.stdout.write('out\n');
        process.stderr.write(Buffer.from('err\n'));
        process.once('exit', (code) => (exitListenerRan = code));
        process.exitCode = 4;
      } finally {
        leave();
      }
      expect(seen).to.deep.equal({
        repo: '/r',
        home: undefined,
        cwd: work,
        umask: 0o077,
        argv: ['/opt/fleet/bin/run.js', 'drift', '--json'],
        stdoutTTY: true,
        stderrTTY: undefined,
        columns: 123,
      });
      expect(written).to.deep.equal([
        [1, 'out\n'],
        [2, 'err\n'],
      ]);
      // The call's `exit` listener ran at its end, with its code, and is gone.
      expect(exitListenerRan).to.equal(4);
      expect(process.listenerCount('exit')).to.equal(before.exitListeners);
      expect({ ...process.env }).to.deep.equal(before.env);
      expect(process.cwd()).to.equal(before.cwd);
      expect(process.umask()).to.equal(before.umask);
      expect(process.argv).to.equal(before.argv);
      expect(process.exitCode).to.equal(undefined);
    });

    it('a working directory that is gone changes nothing', () => {
      const gone = join(work, 'gone');
      const env = { ...process.env };
      expect(() =>
        enterCall(
          {
            argv: ['drift'],
            env: { ONLY_IN_CALL: 'yes' },
            cwd: gone,
            umask: 0o022,
            stdoutIsTTY: false,
            stderrIsTTY: false,
          },
          '/bin/run.js',
          () => undefined,
          () => undefined,
        ),
      ).to.throw(/ENOENT/);
      expect({ ...process.env }).to.deep.equal(env);
    });

    it('replaceEnv removes what the new environment lacks', () => {
      const saved = { ...process.env } as Record<string, string>;
      try {
        replaceEnv({ ONLY: '1' });
        expect({ ...process.env }).to.deep.equal({ ONLY: '1' });
      } finally {
        replaceEnv(saved);
      }
      expect({ ...process.env }).to.deep.equal(saved);
    });
  });

  describe('serveResident, with a stand-in for the CLI', () => {
    let work: string;
    let server: Server | undefined;
    let exits: number[];
    let interrupts: number;
    beforeEach(() => {
      work = realpathSync(mkdtempSync(join(tmpdir(), 'fleet-resident-server-')));
      mkdirSync(join(work, 'run'), { mode: 0o700 });
      exits = [];
      interrupts = 0;
    });
    afterEach(() => {
      if (server?.listening) server.close();
      rmSync(work, { recursive: true, force: true });
    });

    const place = () => ({ dir: join(work, 'run'), socket: join(work, 'run', 'r.sock') });
    const start = async (overrides: Partial<ResidentOptions>) => {
      server = await serveResident({
        place: place(),
        idleMinutes: 1,
        binPath: '/bin/run.js',
        execute: () => Promise.resolve(),
        current: () => true,
        freshState: () => Promise.resolve(),
        log: () => undefined,
        exit: (code) => {
          exits.push(code);
        },
        interrupt: () => {
          interrupts += 1;
        },
        drainMs: 200,
        ...overrides,
      });
    };

    /** One connection: sends `frames`, collects what comes back until the resident closes it. */
    function exchange(frames: Buffer[], afterAccepted?: (send: (b: Buffer) => void) => void) {
      return new Promise<DecodedFrame[]>((resolve, reject) => {
        const socket = connect(place().socket);
        const reader = new FrameReader();
        const got: DecodedFrame[] = [];
        socket.on('connect', () => {
          for (const frame of frames) socket.write(frame);
        });
        socket.on('data', (chunk: Buffer) => {
          for (const frame of reader.push(chunk)) {
            got.push(frame);
            if (frame.type === Frame.accepted) afterAccepted?.((b) => socket.write(b));
          }
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(got));
      });
    }

    const call = (argv: string[], extra: Partial<CallRequest> = {}): Buffer =>
      encodeFrame(
        Frame.call,
        JSON.stringify({
          argv,
          env: { ...process.env },
          cwd: process.cwd(),
          umask: process.umask(),
          stdoutIsTTY: false,
          stderrIsTTY: false,
          ...extra,
        }),
      );
    const types = (frames: DecodedFrame[]) => frames.map((f) => String.fromCharCode(f.type));
    const reason = (frames: DecodedFrame[]) =>
      (JSON.parse(String(frames[0]?.payload)) as { reason: string }).reason;

    it('runs a call: accepted, its output, its exit code', async () => {
      await start({
        execute: (argv) => {
          process.stdout.write(`ran ${argv.join(' ')}\n`);
          process.exitCode = 5;
          return Promise.resolve();
        },
      });
      const frames = await exchange([call(['drift', '--json'])]);
      expect(types(frames)).to.deep.equal(['A', '1', 'X']);
      expect(String(frames[1]?.payload)).to.equal('ran drift --json\n');
      expect(JSON.parse(String(frames[2]?.payload))).to.deep.equal({ code: 5 });
      expect(process.exitCode).to.equal(undefined);
      const info = await exchange([encodeFrame(Frame.ping)]);
      expect(JSON.parse(String(info[0]?.payload))).to.include({ calls: 1, busy: false });
    });

    it('declines what it does not run, and a second call while one runs', async () => {
      let release!: () => void;
      await start({ execute: () => new Promise<void>((resolve) => (release = resolve)) });
      expect(reason(await exchange([call(['lab', 'up'])]))).to.equal(
        'not a verb the resident runs',
      );
      expect(reason(await exchange([encodeFrame(Frame.call, '{"argv":[]}')]))).to.equal(
        'the call is not one this resident reads',
      );
      const first = exchange([call(['drift'])]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(reason(await exchange([call(['status'])]))).to.equal('busy with another call');
      release();
      expect(types(await first)).to.deep.equal(['A', 'X']);
      expect(
        reason(await exchange([call(['drift'], { env: { ...process.env, HOME: '/elsewhere' } })])),
      ).to.equal('another home, or other oclif directories, than its own');
    });

    it('ends when its socket is removed or taken: nobody can reach it any more', async () => {
      await start({ socketCheckMs: 20 });
      rmSync(place().socket);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(exits).to.deep.equal([0]);
    });

    it('the caller tells a resident that declined from a socket nobody listens on', async () => {
      await start({});
      expect(await callResident(place(), ['lab', 'up'])).to.equal('declined');
      // A killed resident's socket: the name outlives the listener (a hard link kept past close).
      const stale = join(work, 'run', 'stale.sock');
      const listener = createServer();
      await new Promise<void>((resolve) => listener.listen(join(work, 'run', 'l.sock'), resolve));
      linkSync(join(work, 'run', 'l.sock'), stale);
      await new Promise((resolve) => listener.close(resolve));
      expect(await callResident({ dir: join(work, 'run'), socket: stale }, ['drift'])).to.equal(
        'absent',
      );
    });

    it('declines the call and ends when its code changed on disk', async () => {
      let current = true;
      await start({ current: () => current });
      current = false;
      expect(reason(await exchange([call(['drift'])]))).to.equal('the code on disk changed');
      expect(exits).to.deep.equal([0]);
    });

    it('lets its process end once its server is closed, whoever closes it', () => {
      // The idle timer (a minute here) is armed as it listens: a resident closed by its embedder
      // must not hold that process open until the timer fires.
      const server = new URL('../src/server.js', import.meta.url).href;
      const script = [
        `import { serveResident } from ${JSON.stringify(server)};`,
        `const place = ${JSON.stringify(place())};`,
        'const server = await serveResident({ place, idleMinutes: 1, binPath: "/bin/run.js",',
        '  execute: async () => {}, current: () => true, freshState: async () => {},',
        '  log: () => {}, exit: () => {}, interrupt: () => {} });',
        'server.close();',
      ].join('\n');
      const started = Date.now();
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 10_000, // killed then: status null
      });
      expect(child.status, child.stderr).to.equal(0);
      expect(Date.now() - started).to.be.below(10_000);
    });

    it('Ctrl-C of the caller interrupts the call; a call that leaves work running ends it', async () => {
      let timer: NodeJS.Timeout | undefined;
      await start({
        execute: async () => {
          timer = setTimeout(() => undefined, 5_000); // outlives the call, keeping a process alive
          await new Promise((resolve) => setTimeout(resolve, 100)); // Ctrl-C arrives meanwhile
        },
      });
      const frames = await exchange([call(['drift'])], (send) => send(encodeFrame(Frame.signal)));
      clearTimeout(timer);
      expect(interrupts).to.equal(1);
      expect(types(frames)).to.deep.equal(['A', 'X']);
      expect(exits).to.deep.equal([0]);
    });
  });
});
