/**
 * The SSH recovery path of `bootstrap apply --recover` (contract §12; reliability catalogue
 * "Forced-command enforcement" and "Host key pinning"), against a real OpenSSH server on
 * 127.0.0.1 (test/src/sshd.ts) whose authorized_keys forces `fleet bootstrap receive`:
 * - the operator side (`runRecoveryVerb`): the pinned host key works; a changed or unknown key is
 *   refused before anything is sent (the sshd log shows no authentication, no session; the
 *   receiver log is untouched); bad host/user aliases are refused before connecting;
 * - the node side (`fleet bootstrap receive`): whatever the client asks — through node-ssh, the
 *   system `ssh`, with a PTY or forwarding — only the receiver runs, and it treats
 *   `SSH_ORIGINAL_COMMAND` as data (exit 2, a log line, no payload executed);
 * - the bundle format of `apply` (`readBundle`/`encodeBundle`) and `authorizedKeysLine`.
 */
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  FLEET_PROTOCOL_VERSION,
  isFleetError,
  orderAuditSegments,
  verifyAuditSegments,
  type FleetErrorLike,
  type Registry,
} from '@fleet/core';
import { NodeSSH } from 'node-ssh';
import { FLEET_BIN, ROOT, fleet, tempDir, waitFor } from '../src/fleet.js';
import {
  operatorModule,
  generateKey,
  requireSshd,
  run,
  startSshd,
  type Sshd,
} from '../src/sshd.js';

type SshModule = typeof import('@fleet/operator/bootstrap/ssh.js');
type BundleModule = typeof import('@fleet/operator/bootstrap/bundle.js');
type ReceiverModule = typeof import('@fleet/operator/bootstrap/receiver.js');
type HandlersModule = typeof import('@fleet/operator/bootstrap/receiver-handlers.js');
type AuthorizedKeysModule = typeof import('@fleet/operator/bootstrap/authorized-keys.js');
type KeysModule = typeof import('@fleet/operator/bootstrap/ssh-keys.js');
type RecoveryTarget = import('@fleet/operator/bootstrap/ssh.js').RecoveryTarget;
type ReceiverContext = import('@fleet/operator/bootstrap/receiver-handlers.js').ReceiverContext;

const CLI_VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'packages', 'cli', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

async function failure(promise: Promise<unknown>): Promise<FleetErrorLike> {
  try {
    await promise;
  } catch (error) {
    if (isFleetError(error)) return error;
    throw error;
  }
  return expect.fail('expected a fleet error');
}

/** The state of a file: its sha256, or `absent`. */
function fileState(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return 'absent';
  }
}

/** Collects what is written to it. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

/** The audit log segments of a node home, oldest first. */
async function auditSegments(home: string): Promise<{ name: string; text: string }[]> {
  const dir = join(home, '.local', 'state', 'fleet');
  const names = orderAuditSegments(await readdir(dir));
  return Promise.all(
    names.map(async (name) => ({ name, text: await readFile(join(dir, name), 'utf8') })),
  );
}

/** Every record of a node home's audit log. */
async function auditRecords(home: string): Promise<Record<string, unknown>[]> {
  return (await auditSegments(home)).flatMap(({ text }) =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );
}

/** `ssh-keygen -lf` of a public key: `SHA256:…`. */
async function keygenFingerprint(dir: string, publicKey: string): Promise<string> {
  const path = join(dir, `fp-${randomBytes(4).toString('hex')}.pub`);
  await writeFile(path, `${publicKey}\n`);
  const listed = await run('ssh-keygen', ['-lf', path]);
  const fingerprint = /SHA256:[A-Za-z0-9+/]+/.exec(listed.stdout)?.[0];
  if (!fingerprint) throw new Error(`ssh-keygen -lf: ${listed.stdout}${listed.stderr}`);
  return fingerprint;
}

describe('SSH recovery path (contract §12; catalogue: forced command, host key pinning)', function () {
  this.timeout(120_000);

  let ssh: SshModule;
  let bundle: BundleModule;
  let receiver: ReceiverModule;
  let handlers: HandlersModule;
  let authorized: AuthorizedKeysModule;
  let keys: KeysModule;
  before(async () => {
    ssh = await operatorModule<SshModule>('bootstrap/ssh.js');
    bundle = await operatorModule<BundleModule>('bootstrap/bundle.js');
    receiver = await operatorModule<ReceiverModule>('bootstrap/receiver.js');
    handlers = await operatorModule<HandlersModule>('bootstrap/receiver-handlers.js');
    authorized = await operatorModule<AuthorizedKeysModule>('bootstrap/authorized-keys.js');
    keys = await operatorModule<KeysModule>('bootstrap/ssh-keys.js');
  });

  // ---- the bundle of `apply` ------------------------------------------------------------------

  describe('readBundle / encodeBundle (fleet.bootstrap-bundle/v1)', () => {
    const plan = { id: 'plan-1', host: 'node-01', artifact: { version: '1.2.0' } };
    const artifact = randomBytes(100_003);
    const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    const header = (value: unknown) => Buffer.from(`${JSON.stringify(value)}\n`);
    const envelope = (overrides: Record<string, unknown> = {}) => ({
      schema: 'fleet.bootstrap-bundle/v1',
      plan,
      artifact: { sha256: sha(artifact), bytes: artifact.length },
      ...overrides,
    });
    /** The bytes as a stream of `size`-byte chunks (the header split across chunks too). */
    const stream = (bytes: Buffer, size = 4096) =>
      Readable.from(
        (function* () {
          for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
        })(),
      );

    it('round-trips plan and artifact, whatever the chunking', async () => {
      const encoded = await bundle.encodeBundle(plan, artifact);
      expect(encoded.subarray(0, encoded.indexOf(0x0a)).toString()).to.equal(
        JSON.stringify(envelope()),
      );
      for (const size of [1, 7, 4096, encoded.length]) {
        const read = await bundle.readBundle(stream(encoded, size === 1 ? 1 : size));
        expect(read.plan).to.deep.equal(plan);
        expect(read.artifact).to.deep.equal({ sha256: sha(artifact), bytes: artifact.length });
        expect(read.data?.equals(artifact)).to.equal(true);
      }
    });

    it('carries no bytes for a generation the node holds: the plan only, the sha256 named', async () => {
      const encoded = await bundle.encodeBundle(plan, { held: sha(artifact) });
      expect(encoded.indexOf(0x0a)).to.equal(encoded.length - 1);
      const read = await bundle.readBundle(stream(encoded));
      expect(read.artifact).to.deep.equal({ sha256: sha(artifact), bytes: 0, held: true });
      expect(read.data).to.equal(null);
      // held with bytes after it is no bundle
      const refused: unknown = await bundle
        .readBundle(
          stream(
            Buffer.concat([
              header(envelope({ artifact: { sha256: sha(artifact), bytes: 3, held: true } })),
              Buffer.from('abc'),
            ]),
          ),
        )
        .catch((error: unknown) => error);
      expect(String((refused as Error).message)).to.match(/a held generation comes with no bytes/);
    });

    it('reserves nothing at the size a header declares: memory follows the bytes that come', async () => {
      const declared = 200 * 1024 * 1024;
      let grown = 0;
      const sent = Readable.from(
        (function* () {
          const before = process.memoryUsage().arrayBuffers;
          yield header(envelope({ artifact: { sha256: sha(artifact), bytes: declared } }));
          yield Buffer.from('ten bytes!');
          grown = process.memoryUsage().arrayBuffers - before;
        })(),
      );
      const refused: unknown = await bundle.readBundle(sent).catch((error: unknown) => error);
      expect(String((refused as Error).message)).to.contain(
        `the stream ended after 10 of the ${declared} artifact bytes its header announces`,
      );
      // The old reader allocated the declared 200 MiB when the header arrived.
      expect(grown).to.be.below(16 * 1024 * 1024);
    });

    it('accepts a header line of exactly 64 KiB', async () => {
      const padding = 65_536 - JSON.stringify(envelope({ plan: { pad: '' } })).length;
      const bytes = Buffer.concat([
        header(envelope({ plan: { pad: 'p'.repeat(padding) } })),
        artifact,
      ]);
      expect(bytes.indexOf(0x0a)).to.equal(65_536);
      const read = await bundle.readBundle(stream(bytes));
      expect((read.plan as { pad: string }).pad).to.have.length(padding);
    });

    it('accepts an empty artifact', async () => {
      const read = await bundle.readBundle(
        stream(await bundle.encodeBundle(plan, Buffer.alloc(0))),
      );
      expect(read.data?.length).to.equal(0);
    });

    const bad: [title: string, bytes: () => Buffer, message: RegExp][] = [
      [
        'a sha256 mismatch',
        () =>
          Buffer.concat([
            header(
              envelope({ artifact: { sha256: sha(Buffer.from('x')), bytes: artifact.length } }),
            ),
            artifact,
          ]),
        /sha256 is [0-9a-f]{64}, not the [0-9a-f]{64} its header announces/,
      ],
      [
        'a short stream',
        () => Buffer.concat([header(envelope()), artifact.subarray(0, artifact.length - 1)]),
        /ended after 100002 of the 100003 artifact bytes/,
      ],
      [
        'a long stream',
        () => Buffer.concat([header(envelope()), artifact, Buffer.from('x')]),
        /longer than the 100003 artifact bytes/,
      ],
      [
        'an oversized header (no newline within 64 KiB)',
        () => Buffer.concat([Buffer.from(`{"schema":"${'a'.repeat(70_000)}`), artifact]),
        /header line is longer than 65536 bytes/,
      ],
      [
        'a header of 64 KiB + 1 before its newline',
        () =>
          Buffer.concat([
            header(
              envelope({
                plan: {
                  pad: 'p'.repeat(65_537 - JSON.stringify(envelope({ plan: { pad: '' } })).length),
                },
              }),
            ),
            artifact,
          ]),
        /header line is longer than 65536 bytes/,
      ],
      ['bad JSON', () => Buffer.concat([Buffer.from('{"schema":\n'), artifact]), /not valid JSON/],
      [
        'a duplicate key',
        () =>
          Buffer.concat([
            Buffer.from(
              `{"schema":"fleet.bootstrap-bundle/v1","schema":"fleet.bootstrap-bundle/v1","plan":{},"artifact":{"sha256":"${sha(artifact)}","bytes":${artifact.length}}}\n`,
            ),
            artifact,
          ]),
        /duplicate key "schema"/,
      ],
      [
        'a __proto__ key in the plan',
        () =>
          Buffer.concat([
            Buffer.from(
              `{"schema":"fleet.bootstrap-bundle/v1","plan":{"__proto__":{}},"artifact":{"sha256":"${sha(artifact)}","bytes":${artifact.length}}}\n`,
            ),
            artifact,
          ]),
        /forbidden key "__proto__"/,
      ],
      [
        'an unknown envelope field (no credentials or policy ride along)',
        () => Buffer.concat([header(envelope({ token: 'flt_x' })), artifact]),
        /unknown field/,
      ],
      [
        'another schema',
        () => Buffer.concat([header(envelope({ schema: 'fleet.bootstrap-bundle/v2' })), artifact]),
        /schema: must be fleet\.bootstrap-bundle\/v1/,
      ],
      [
        'no plan',
        () =>
          Buffer.concat([
            header({ schema: 'fleet.bootstrap-bundle/v1', artifact: envelope().artifact }),
            artifact,
          ]),
        /plan/,
      ],
      [
        'an upper-case sha256',
        () =>
          Buffer.concat([
            header(
              envelope({
                artifact: { sha256: sha(artifact).toUpperCase(), bytes: artifact.length },
              }),
            ),
            artifact,
          ]),
        /artifact\.sha256: must be 64 lower-case hex digits/,
      ],
      [
        'an announced size over 256 MiB (refused before reading it)',
        () =>
          header(envelope({ artifact: { sha256: sha(artifact), bytes: 256 * 1024 * 1024 + 1 } })),
        /artifact\.bytes/,
      ],
      [
        'a negative size',
        () =>
          Buffer.concat([
            header(envelope({ artifact: { sha256: sha(artifact), bytes: -1 } })),
            artifact,
          ]),
        /artifact\.bytes/,
      ],
      ['an empty stream', () => Buffer.alloc(0), /the stream is empty/],
      [
        'a stream ending inside the header',
        () => Buffer.from('{"schema":"fleet.bootstrap-bundle/v1"'),
        /ended inside the header line/,
      ],
      [
        'a header that is not UTF-8',
        () => Buffer.concat([Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), artifact]),
        /not UTF-8/,
      ],
    ];
    for (const [title, bytes, message] of bad) {
      it(`refuses ${title}: GENERATION_INVALID (exit 6)`, async () => {
        const error = await failure(bundle.readBundle(stream(bytes())));
        expect(error.code).to.equal('GENERATION_INVALID');
        expect(error.exitCode).to.equal(6);
        expect(error.message).to.match(message);
      });
    }

    it('encodeBundle refuses a plan whose header would exceed 64 KiB', async () => {
      const error = await failure(bundle.encodeBundle({ pad: 'x'.repeat(70_000) }, artifact));
      expect(error.code).to.equal('GENERATION_INVALID');
      expect(error.message).to.match(/header \(the plan\) is \d+ bytes/);
    });

    it('honours smaller limits', async () => {
      const encoded = await bundle.encodeBundle(plan, artifact);
      const error = await failure(
        bundle.readBundle(stream(encoded), { maxHeaderBytes: 65_536, maxArtifactBytes: 1000 }),
      );
      expect(error.message).to.match(/artifact\.bytes/);
    });
  });

  // ---- authorized_keys ------------------------------------------------------------------------

  describe('authorizedKeysLine', () => {
    const publicKey =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILW3U4nZ3rog/FA37mVT98pa//xIvVE6Jl6X+ayXBMx8';

    it('is restrict + a forced command + the key, comment fleet-bootstrap', () => {
      expect(
        authorized.authorizedKeysLine({
          publicKey: `${publicKey} operator@seat`,
          command: [
            '/usr/bin/node',
            '/opt/fleet/bin/run.js',
            'bootstrap',
            'receive',
            '--home',
            '/home/fleet',
          ],
        }),
      ).to.equal(
        `restrict,command="/usr/bin/node /opt/fleet/bin/run.js bootstrap receive --home /home/fleet" ${publicKey} fleet-bootstrap`,
      );
    });

    it('single-quotes an argument that is not plain (sshd runs the command through a shell)', () => {
      const line = authorized.authorizedKeysLine({
        publicKey,
        command: [
          '/usr/bin/node',
          '/opt/my fleet/run.js',
          'bootstrap',
          'receive',
          '--home',
          '/h/$x',
        ],
      });
      expect(line).to.contain(
        `command="/usr/bin/node '/opt/my fleet/run.js' bootstrap receive --home '/h/$x'"`,
      );
    });

    const refusedCommands: [title: string, command: string[]][] = [
      ['a double quote', ['/usr/bin/node', '/x"y']],
      ['a backslash', ['/usr/bin/node', '/x\\y']],
      ['a single quote', ['/usr/bin/node', "/x'y"]],
      ['a newline', ['/usr/bin/node', '/x\ny']],
      ['a NUL', ['/usr/bin/node', '/x\0y']],
      ['an empty argument', ['/usr/bin/node', '']],
      ['no argument at all', []],
    ];
    for (const [title, command] of refusedCommands) {
      it(`refuses a command with ${title}`, () => {
        expect(() => authorized.authorizedKeysLine({ publicKey, command })).to.throw(
          /authorizedKeysLine/,
        );
      });
    }

    for (const bad of [
      `command="sh" ${publicKey}`,
      `${publicKey}\nssh-ed25519 AAAA`,
      'ssh-ed25519',
      `ssh-rsa ${publicKey.split(' ')[1]}`,
      'ssh-dss AAAAB3NzaC1kc3MAAACBAP',
    ]) {
      it(`refuses the public key ${JSON.stringify(bad.slice(0, 40))}`, () => {
        expect(() =>
          authorized.authorizedKeysLine({ publicKey: bad, command: ['/bin/true'] }),
        ).to.throw(/authorizedKeysLine/);
      });
    }
  });

  // ---- the receiver, in process ---------------------------------------------------------------

  describe('the receiver (SSH_ORIGINAL_COMMAND as data)', () => {
    let tmp: { path: string; cleanup: () => Promise<void> };
    let home: string;
    let calls: { verb: string; context: ReceiverContext }[];
    const spyTable = () => ({
      version: (context: ReceiverContext) => {
        calls.push({ verb: 'version', context });
        return Promise.resolve(0);
      },
      status: (context: ReceiverContext) => {
        calls.push({ verb: 'status', context });
        return Promise.resolve(0);
      },
      apply: (context: ReceiverContext) => {
        calls.push({ verb: 'apply', context });
        return Promise.resolve(0);
      },
    });
    const noRegistry = (): Promise<Registry> => Promise.reject(new Error('not in this test'));
    const receive = async (
      originalCommand: string | undefined,
      table: HandlersModule['receiverHandlers'] = spyTable(),
      extra: { stdin?: Readable; keyFingerprint?: string } = {},
    ) => {
      const stdout = new Sink();
      const stderr = new Sink();
      const exitCode = await receiver.runReceiver({
        home,
        version: '9.9.9',
        originalCommand,
        stdin: extra.stdin ?? Readable.from([]),
        stdout,
        stderr,
        loadRegistry: noRegistry,
        handlers: table,
        ...(extra.keyFingerprint === undefined ? {} : { keyFingerprint: extra.keyFingerprint }),
      });
      return { exitCode, stdout: stdout.text, stderr: stderr.text };
    };
    const logText = () => readFile(receiver.receiverLogPath(home), 'utf8');

    beforeEach(async () => {
      tmp = await tempDir('fleet-receiver-');
      home = tmp.path;
      calls = [];
    });
    afterEach(async () => {
      await tmp.cleanup();
    });

    const refused: (string | undefined)[] = [
      'rm -rf / ; id',
      '$(id)',
      '`id`',
      '() { :;}; id',
      'status; id',
      'version && id',
      'version\nid',
      'version id',
      'apply | sh',
      '',
      '   ',
      'VERSION',
      'versions',
      'ver',
      'version\0',
      '\u00a0version\u00a0',
      'version\u2028',
      undefined,
    ];
    for (const request of refused) {
      it(`refuses ${request === undefined ? 'no command (a shell request)' : JSON.stringify(request)}: exit 2, usage on stderr, a log line, no handler`, async () => {
        const result = await receive(request);
        expect(result.exitCode).to.equal(2);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.match(/usage: ssh <node> version\|status\|apply/);
        expect(calls).to.deep.equal([]);
        const log = await logText();
        const lines = log.trimEnd().split('\n');
        expect(lines).to.have.length(1);
        expect(lines[0]).to.match(/^\d{4}-\d\d-\d\dT[\d:.]+Z refused request /);
        // JSON-quoted; U+2028/U+2029 escaped as well (some readers break lines there).
        expect(lines[0]).to.contain(
          request === undefined
            ? '(none: no command was requested)'
            : JSON.stringify(request).replace(/\u2028/g, '\\u2028'),
        );
      });
    }

    for (const request of ['version', ' version', 'status\n', '\tapply ']) {
      it(`accepts ${JSON.stringify(request)} (trimmed, then compared exactly)`, async () => {
        const result = await receive(request);
        expect(result.exitCode).to.equal(0);
        expect(calls.map((call) => call.verb)).to.deep.equal([request.trim()]);
        const context = calls[0]?.context;
        expect(context?.home).to.equal(home);
        expect(context?.version).to.equal('9.9.9');
        expect(Object.keys(context ?? {}).sort()).to.deep.equal(
          ['audit', 'home', 'loadRegistry', 'log', 'stderr', 'stdin', 'stdout', 'version'].sort(),
        );
        expect(await logText()).to.match(/accepted request .*\n.*finished "\w+" exit 0\n$/);
      });
    }

    it('an allowlisted verb without a handler: exit 2 "not available in this runtime"', async () => {
      const result = await receive('status', {});
      expect(result.exitCode).to.equal(2);
      expect(result.stderr).to.contain('"status" is not available in this runtime');
    });

    it('a handler exit code is the receiver exit code; a thrown fleet error is logged and rethrown', async () => {
      expect((await receive('apply', { apply: () => Promise.resolve(3) })).exitCode).to.equal(3);
      const core = await import('@fleet/core');
      const error = await failure(
        receive('apply', {
          apply: () => Promise.reject(new core.FleetError('GENERATION_INVALID', 'bad bundle')),
        }),
      );
      expect(error.code).to.equal('GENERATION_INVALID');
      expect(await logText()).to.contain('failed "apply": GENERATION_INVALID');
    });

    it('the receiver log is 0600 (tightened if wider) and never followed through a symlink', async () => {
      await receive('$(id)');
      expect((await stat(receiver.receiverLogPath(home))).mode & 0o777).to.equal(0o600);
      await chmod(receiver.receiverLogPath(home), 0o644);
      await receive('version');
      expect((await stat(receiver.receiverLogPath(home))).mode & 0o777).to.equal(0o600);

      const other = await tempDir('fleet-receiver-link-');
      try {
        const target = join(other.path, 'elsewhere.log');
        await writeFile(target, '');
        const linked = join(other.path, 'home');
        await mkdir(join(linked, '.local', 'state', 'fleet'), { recursive: true });
        await symlink(target, join(linked, '.local', 'state', 'fleet', 'receiver.log'));
        home = linked;
        // An accepted request that cannot be logged is not served (as the audit log: fail closed).
        const accepted = await receive('version');
        expect(accepted.exitCode).to.equal(6);
        expect(calls.filter((call) => call.context.home === linked)).to.deep.equal([]);
        expect(accepted.stderr).to.contain('cannot be written');
        // A refused request stays refused.
        expect((await receive('sh -c id')).exitCode).to.equal(2);
        expect(await readFile(target, 'utf8')).to.equal('');
      } finally {
        home = tmp.path;
        await other.cleanup();
      }
    });

    for (const [what, link] of [
      ['~/.local/state', ['.local', 'state']],
      ['~/.local/state/fleet', ['.local', 'state', 'fleet']],
    ] as const) {
      it(`refuses a symlinked ${what} on the way to the receiver log, as the controller does; nothing written through it`, async () => {
        const other = await tempDir('fleet-receiver-dirlink-');
        try {
          const outside = join(other.path, 'outside');
          await mkdir(outside);
          const linked = join(other.path, 'home');
          await mkdir(join(linked, ...link.slice(0, -1)), { recursive: true });
          await symlink(outside, join(linked, ...link));
          home = linked;
          const accepted = await receive('version');
          expect(accepted.exitCode).to.equal(6);
          expect(accepted.stderr).to.contain('cannot be written');
          expect(calls.filter((call) => call.context.home === linked)).to.deep.equal([]);
          expect((await receive('sh -c id')).exitCode).to.equal(2);
          expect(await readdir(outside, { recursive: true })).to.deep.equal([]);
        } finally {
          home = tmp.path;
          await other.cleanup();
        }
      });
    }

    it('a very long request is cut in the log, one line whatever it holds', async () => {
      await receive(
        `version\n${'x'.repeat(10_000)}\n2026-01-01T00:00:00.000Z accepted request "apply"`,
      );
      const lines = (await logText()).trimEnd().split('\n');
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/… \(\d+ characters\)$/);
      expect(lines[0]!.length).to.be.below(700);
    });

    it("a refused request is also in the node's hash-chained audit log: denied, USAGE, the caller ssh:forced-command", async () => {
      expect((await receive('sh -c id')).exitCode).to.equal(2);
      const [record, ...rest] = await auditRecords(home);
      expect(rest).to.deep.equal([]);
      expect(record).to.deep.include({
        seq: 1,
        operationId: null,
        client: 'ssh:forced-command',
        operation: 'receiver-request',
        outcome: 'denied',
        code: 'USAGE',
        detail: 'refused request "sh -c id"',
      });
      expect(verifyAuditSegments(await auditSegments(home)).ok).to.equal(true);
    });

    it("apply refused at its stage is recorded under the request's operation id and the key that asked", async () => {
      const key = `SHA256:${'A'.repeat(43)}`;
      const error = await failure(
        receive('apply', handlers.receiverHandlers, {
          stdin: Readable.from([Buffer.from('not a bundle\n')]),
          keyFingerprint: key,
        }),
      );
      const records = await auditRecords(home);
      expect(records).to.have.length(1);
      expect(records[0]).to.deep.include({
        client: `ssh:${key}`,
        operation: 'runtime-stage',
        outcome: 'failed',
        code: error.code,
      });
      const id = String(records[0]?.['operationId']);
      expect(id).to.match(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
      // The receiver log names the same operation: one request, two logs that agree.
      expect(await logText()).to.contain(`accepted request "apply" (operation ${id})`);
    });

    it('the version handler answers {receiver, version, protocol}', async () => {
      const result = await receive('version', handlers.receiverHandlers);
      expect(result.exitCode).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal({
        receiver: 'fleet',
        version: '9.9.9',
        protocol: FLEET_PROTOCOL_VERSION,
      });
    });
  });

  // ---- through a real sshd --------------------------------------------------------------------

  describe('through a local sshd whose authorized_keys forces `fleet bootstrap receive`', () => {
    let tmp: { path: string; cleanup: () => Promise<void> };
    let homeA: string;
    let homeB: string;
    let a: Sshd | undefined;
    let b: Sshd | undefined;
    let knownHostsBefore: string;
    const knownHosts = join(homedir(), '.ssh', 'known_hosts');

    const receiverLog = (home: string) => join(home, '.local', 'state', 'fleet', 'receiver.log');
    const targetOf = (server: Sshd, overrides: Partial<RecoveryTarget> = {}): RecoveryTarget => ({
      name: 'node-01',
      host: server.host,
      port: server.port,
      user: server.user,
      hostKey: server.hostKey,
      identityFile: server.identityFile,
      ...overrides,
    });
    const sshdA = () => a as Sshd;
    const sshdB = () => b as Sshd;
    const receive = (home: string) => [
      process.execPath,
      FLEET_BIN,
      'bootstrap',
      'receive',
      '--home',
      home,
    ];

    /** The sshd log written after `offset`, once `until` matches it (or 5 s passed). */
    async function logAfter(server: Sshd, offset: number, until: RegExp): Promise<string> {
      let text = '';
      await waitFor(
        async () => until.test((text = (await server.log()).slice(offset))),
        5_000,
        `sshd log matching ${String(until)}`,
      ).catch(() => undefined);
      return text;
    }
    const PREAUTH_END = /Disconnected from .*\[preauth\]|Connection closed by .*\[preauth\]/;
    const NO_AUTH_NO_SESSION =
      /Accepted key|Postponed publickey|Accepted publickey|Starting session/;

    /** Runs one raw command string through node-ssh (what a hostile client could send). */
    async function rawExec(server: Sshd, command: string) {
      const client = new NodeSSH();
      const pinned = keys.parseOpenSshPublicKey(server.hostKey);
      await client.connect({
        host: server.host,
        port: server.port,
        username: server.user,
        privateKey: await readFile(server.identityFile, 'utf8'),
        hostVerifier: (key: Buffer) => pinned !== undefined && key.equals(pinned.blob),
      });
      try {
        return await client.execCommand(command, { noTrim: true });
      } finally {
        client.dispose();
      }
    }

    /** The system OpenSSH client, pinned as the catalogue prescribes. */
    async function systemSsh(
      server: Sshd,
      knownHostsFile: string,
      extra: string[],
      command?: string,
    ) {
      return run('ssh', [
        '-F',
        '/dev/null',
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        `UserKnownHostsFile=${knownHostsFile}`,
        '-o',
        'GlobalKnownHostsFile=/dev/null',
        '-o',
        'UpdateHostKeys=no',
        '-o',
        'BatchMode=yes',
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'IdentityAgent=none',
        '-i',
        server.identityFile,
        '-p',
        String(server.port),
        ...extra,
        '--',
        `${server.user}@127.0.0.1`,
        ...(command === undefined ? [] : [command]),
      ]);
    }

    before(async function () {
      requireSshd(this);
      knownHostsBefore = fileState(knownHosts);
      tmp = await tempDir('fleet-ssh-recovery-');
      homeA = join(tmp.path, 'home-a');
      homeB = join(tmp.path, 'home-b');
      await mkdir(homeA);
      await mkdir(homeB);
      a = await startSshd({ forcedCommand: receive(homeA) });
      // The same node re-imaged (or a machine in the middle): another host key.
      b = await startSshd({ forcedCommand: receive(homeB) });
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await tmp?.cleanup();
    });
    afterEach(() => {
      // Known-hosts files are never read or written by fleet.
      expect(fileState(knownHosts)).to.equal(knownHostsBefore);
    });

    it('the pinned key works: `version` round-trips through the forced command', async () => {
      const result = await ssh.runRecoveryVerb(targetOf(sshdA()), 'version');
      expect(result.exitCode, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal({
        receiver: 'fleet',
        version: CLI_VERSION,
        protocol: FLEET_PROTOCOL_VERSION,
      });
      expect(await readFile(receiverLog(homeA), 'utf8')).to.match(
        /accepted request "version" \(operation [0-9A-Z]{26}\)\n/,
      );
      expect(await sshdA().log()).to.match(/Starting session: forced-command \(key-option\)/);
    });

    it('streams stdin (8 MiB) to the receiver and ends it, even when the verb does not read it', async () => {
      const result = await ssh.runRecoveryVerb(
        targetOf(sshdA()),
        'version',
        randomBytes(8 * 1024 * 1024),
      );
      expect(result.exitCode, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout)).to.include({ receiver: 'fleet' });
    });

    it('a changed host key (another sshd) is HOSTKEY_MISMATCH before anything is sent', async () => {
      const offset = (await sshdB().log()).length;
      const error = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { port: sshdB().port }), 'version'),
      );
      expect(error.code).to.equal('HOSTKEY_MISMATCH');
      expect(error.exitCode).to.equal(7);
      expect(error.message)
        .to.contain('node-01')
        .and.contain(await keygenFingerprint(tmp.path, sshdB().hostKey))
        .and.contain(await keygenFingerprint(tmp.path, sshdA().hostKey))
        .and.contain('hosts.node-01.ssh.hostKey');
      const log = await logAfter(sshdB(), offset, PREAUTH_END);
      expect(log).to.match(/Connection from 127\.0\.0\.1/);
      expect(log).to.match(PREAUTH_END);
      expect(log).to.not.match(NO_AUTH_NO_SESSION);
      expect(fileState(receiverLog(homeB))).to.equal('absent');
    });

    it('a pin changed in the target is HOSTKEY_MISMATCH; the receiver log is untouched', async () => {
      const other = await generateKey(join(tmp.path, 'other_host_key'));
      const receiverBefore = fileState(receiverLog(homeA));
      const offset = (await sshdA().log()).length;
      const error = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { hostKey: other.publicKey }), 'version'),
      );
      expect(error.code).to.equal('HOSTKEY_MISMATCH');
      expect(error.message).to.contain(await keygenFingerprint(tmp.path, other.publicKey));
      const log = await logAfter(sshdA(), offset, PREAUTH_END);
      expect(log).to.match(PREAUTH_END);
      expect(log).to.not.match(NO_AUTH_NO_SESSION);
      expect(fileState(receiverLog(homeA))).to.equal(receiverBefore);
    });

    for (const [title, hostKey] of [
      ['no pinned key', undefined],
      ['an empty pinned key', ''],
      ['a pin whose type does not match its key', 'TYPE-SWAP'],
      ['a pin that is not a key', 'ssh-ed25519 not-base64!'],
    ] as const) {
      it(`${title} is HOSTKEY_UNKNOWN, without connecting (no TOFU)`, async () => {
        const pin =
          hostKey === 'TYPE-SWAP'
            ? `ecdsa-sha2-nistp256 ${sshdA().hostKey.split(' ')[1]}`
            : hostKey;
        const offset = (await sshdA().log()).length;
        const error = await failure(
          ssh.runRecoveryVerb(targetOf(sshdA(), { hostKey: pin }), 'version'),
        );
        expect(error.code).to.equal('HOSTKEY_UNKNOWN');
        expect(error.exitCode).to.equal(7);
        expect(error.message).to.contain('node-01').and.contain('out of band');
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await sshdA().log()).slice(offset)).to.equal('');
      });
    }

    describe('host and user aliases are refused before connecting', () => {
      const cases: [field: 'host' | 'user', value: string][] = [
        ['host', '-oProxyCommand=touch CANARY'],
        ['host', 'a;b'],
        ['host', 'h%h'],
        ['host', '127.0.0.1 -p 22'],
        ['host', ''],
        ['host', '[127.0.0.1'],
        ['user', '-oProxyCommand=touch CANARY'],
        ['user', 'root;id'],
        ['user', 'r%u'],
        ['user', 'root@127.0.0.1'],
      ];
      for (const [field, value] of cases) {
        it(`${field} ${JSON.stringify(value)}: USAGE (exit 2), no connection, nothing run`, async () => {
          const canary = join(tmp.path, 'canary');
          const offset = (await sshdA().log()).length;
          const error = await failure(
            ssh.runRecoveryVerb(
              targetOf(sshdA(), { [field]: value.replace('CANARY', canary) }),
              'version',
            ),
          );
          expect(error.code).to.equal('USAGE');
          expect(error.exitCode).to.equal(2);
          expect(error.message).to.contain(`ssh ${field} of node-01 refused`);
          expect(existsSync(canary)).to.equal(false);
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect((await sshdA().log()).slice(offset)).to.equal('');
        });
      }

      it('a verb outside the allowlist is refused before connecting', async () => {
        const error = await failure(
          ssh.runRecoveryVerb(targetOf(sshdA()), 'sh -c id' as 'version'),
        );
        expect(error.code).to.equal('USAGE');
      });
    });

    it('a key the node does not authorise is AUTH_INVALID (exit 4)', async () => {
      const stranger = await generateKey(join(tmp.path, 'stranger'));
      const offset = (await sshdA().log()).length;
      const error = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { identityFile: stranger.privateKey }), 'version'),
      );
      expect(error.code).to.equal('AUTH_INVALID');
      expect(error.exitCode).to.equal(4);
      expect(await logAfter(sshdA(), offset, PREAUTH_END)).to.not.match(
        /Accepted publickey|Starting session/,
      );
    });

    it('the identity file must be 0600 and exist', async () => {
      const loose = join(tmp.path, 'loose_key');
      await writeFile(loose, await readFile(sshdA().identityFile), { mode: 0o644 });
      await chmod(loose, 0o644);
      const insecure = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { identityFile: loose }), 'version'),
      );
      expect(insecure.code).to.equal('CREDENTIALS_INSECURE');
      expect(insecure.message).to.contain('chmod 600');
      const missing = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { identityFile: join(tmp.path, 'nope') }), 'version'),
      );
      expect(missing.code).to.equal('CREDENTIALS_MISSING');
    });

    it('an encrypted identity file is CREDENTIALS_INVALID (no passphrase prompt)', async () => {
      const locked = join(tmp.path, 'locked_key');
      const made = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret', '-f', locked]);
      expect(made.exitCode, made.stderr).to.equal(0);
      const error = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { identityFile: locked }), 'version'),
      );
      expect(error.code).to.equal('CREDENTIALS_INVALID');
      expect(error.message).to.contain(locked);
    });

    it('a host without a key of the pinned type is HOSTKEY_MISMATCH', async () => {
      const ecdsa = join(tmp.path, 'ecdsa_host_key');
      const made = await run('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-f', ecdsa]);
      expect(made.exitCode, made.stderr).to.equal(0);
      const pin = (await readFile(`${ecdsa}.pub`, 'utf8')).split(' ').slice(0, 2).join(' ');
      const offset = (await sshdA().log()).length;
      const error = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { hostKey: pin }), 'version'),
      );
      expect(error.code).to.equal('HOSTKEY_MISMATCH');
      expect(error.message).to.contain('offers no ecdsa-sha2-nistp256 key');
      expect(await logAfter(sshdA(), offset, /\[preauth\]/)).to.not.match(NO_AUTH_NO_SESSION);
    });

    it('a closed port is HOST_UNREACHABLE (exit 5)', async () => {
      const { freePort } = await import('../src/sshd.js');
      const error = await failure(
        ssh.runRecoveryVerb(targetOf(sshdA(), { port: await freePort() }), 'version'),
      );
      expect(error.code).to.equal('HOST_UNREACHABLE');
      expect(error.exitCode).to.equal(5);
    });

    describe("the receiver checks its sshd (sshd -T): a session's environment is refused", () => {
      const unsafe: [string, string[], RegExp][] = [
        ['PermitUserEnvironment yes', ['PermitUserEnvironment yes'], /PermitUserEnvironment yes/],
        ['AcceptEnv NODE_*', ['AcceptEnv NODE_*'], /accepts NODE_OPTIONS, NODE_PATH/],
      ];
      for (const [title, extraConfig, reason] of unsafe) {
        it(`${title}: SSH_ENVIRONMENT_UNSAFE (exit 7), one line, in both logs, nothing served`, async () => {
          const home = join(tmp.path, `home-${randomBytes(4).toString('hex')}`);
          await mkdir(home);
          const server = await startSshd({ forcedCommand: receive(home), extraConfig });
          try {
            const result = await ssh.runRecoveryVerb(targetOf(server), 'version');
            expect(result.exitCode, result.stderr).to.equal(7);
            expect(result.stdout).to.equal('');
            const [coded, human, ...rest] = result.stderr.trimEnd().split('\n');
            expect(rest).to.deep.equal([]);
            expect(JSON.parse(coded?.replace(/^fleet-error: /, '') ?? '')).to.include({
              code: 'SSH_ENVIRONMENT_UNSAFE',
            });
            expect(human).to.match(reason);
            expect(human).to.contain(`-f ${server.dir}/sshd_config`);
            expect(await readFile(receiverLog(home), 'utf8')).to.match(
              /refused "version": .*\(SSH_ENVIRONMENT_UNSAFE\)\n$/,
            );
            const records = await auditRecords(home);
            expect(records).to.have.length(1);
            expect(records[0]).to.deep.include({
              operation: 'receiver-request',
              outcome: 'denied',
              code: 'SSH_ENVIRONMENT_UNSAFE',
              client: 'ssh:forced-command',
            });
          } finally {
            await server.stop();
          }
        });
      }
    });

    describe('forced-command enforcement (any command string is data)', () => {
      let canaryDir: string;
      let canary: string;
      beforeEach(async () => {
        canaryDir = join(tmp.path, 'canary-dir');
        canary = join(tmp.path, 'pwned');
        await mkdir(canaryDir, { recursive: true });
      });

      const payloads = (dir: string, file: string) => [
        `rm -rf ${dir} ; id`,
        `$(touch ${file})`,
        `\`touch ${file}\``,
        `() { :;}; touch ${file}`,
        `status; touch ${file}`,
        `version && touch ${file}`,
        `version\ntouch ${file}`,
        'sh -c id',
        'id',
        '',
      ];

      it('node-ssh with raw commands: exit 2, a JSON-quoted log line each, nothing executed', async function () {
        for (const payload of payloads(canaryDir, canary)) {
          const result = await rawExec(sshdA(), payload);
          expect(result.code, payload).to.equal(2);
          expect(result.stdout, payload).to.equal('');
          expect(`${result.stdout}${result.stderr}`).to.not.match(/uid=\d+/);
          expect(result.stderr).to.contain('usage: ssh <node> version|status|apply');
          expect(await readFile(receiverLog(homeA), 'utf8')).to.contain(
            `refused request ${JSON.stringify(payload)}\n`,
          );
          expect(existsSync(canary), payload).to.equal(false);
          expect(existsSync(canaryDir), payload).to.equal(true);
        }
        // Each refusal is in the node's audit log, which `fleet audit` reads and verifies.
        const shown = await fleet(['audit', 'show', '--home', homeA, '--json']);
        expect(shown.exitCode, shown.stderr).to.equal(0);
        const details = (
          JSON.parse(shown.stdout) as { records: { detail: string; client: string }[] }
        ).records
          .filter((record) => record.client === 'ssh:forced-command')
          .map((record) => record.detail);
        for (const payload of payloads(canaryDir, canary)) {
          expect(details).to.include(`refused request ${JSON.stringify(payload)}`);
        }
        const verified = await fleet(['audit', 'verify', '--home', homeA]);
        expect(verified.exitCode, verified.stderr + verified.stdout).to.equal(0);
        expect(verified.stdout).to.match(/intact/);
      });

      it('the system ssh client (pinned known_hosts): `sh -c id` and a bare login get exit 2', async () => {
        const pinned = join(tmp.path, 'known_hosts_pinned');
        await sshdA().writeKnownHosts(pinned);
        const pinnedBefore = fileState(pinned);
        const id = await systemSsh(sshdA(), pinned, [], 'sh -c id');
        expect(id.exitCode, id.stderr).to.equal(2);
        expect(`${id.stdout}${id.stderr}`).to.not.match(/uid=\d+/);
        expect(await readFile(receiverLog(homeA), 'utf8')).to.contain(
          'refused request "sh -c id"\n',
        );
        const login = await systemSsh(sshdA(), pinned, []);
        expect(login.exitCode, login.stderr).to.equal(2);
        expect(await readFile(receiverLog(homeA), 'utf8')).to.contain(
          'refused request (none: no command was requested)\n',
        );
        const version = await systemSsh(sshdA(), pinned, [], 'version');
        expect(version.exitCode, version.stderr).to.equal(0);
        expect(JSON.parse(version.stdout)).to.include({ receiver: 'fleet', version: CLI_VERSION });
        expect(fileState(pinned)).to.equal(pinnedBefore);
      });

      it('the system ssh client refuses a changed key (exit 255), known_hosts unchanged', async () => {
        const pinned = join(tmp.path, 'known_hosts_a_for_b');
        await sshdB().writeKnownHosts(pinned, sshdA().hostKey);
        const pinnedBefore = fileState(pinned);
        const result = await systemSsh(sshdB(), pinned, [], 'version');
        expect(result.exitCode).to.equal(255);
        expect(result.stderr).to.contain('REMOTE HOST IDENTIFICATION HAS CHANGED');
        expect(fileState(pinned)).to.equal(pinnedBefore);
        expect(fileState(receiverLog(homeB))).to.equal('absent');
      });

      it('a PTY is refused (ssh -tt, node-ssh shell); only the receiver runs', async () => {
        const pinned = join(tmp.path, 'known_hosts_pty');
        await sshdA().writeKnownHosts(pinned);
        const before = await readFile(receiverLog(homeA), 'utf8').catch(() => '');
        const offset = (await sshdA().log()).length;
        const forced = await systemSsh(sshdA(), pinned, ['-tt'], `touch ${canary}`);
        // ssh -tt gives up when the PTY is refused (whether sshd started the session by then
        // is a race); if a session started, it ran the forced command and nothing else.
        expect(forced.exitCode).to.equal(255);
        expect(forced.stderr).to.contain('PTY allocation request failed');
        const log = await logAfter(
          sshdA(),
          offset,
          /Disconnected from|Close session|Closing connection/,
        );
        expect(log).to.match(/Accepted publickey/);
        expect(log).to.not.match(/Starting session: (?!forced-command \(key-option\))/);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(existsSync(canary)).to.equal(false);
        const lines = (await readFile(receiverLog(homeA), 'utf8').catch(() => ''))
          .slice(before.length)
          .split('\n')
          .filter((line) => line !== '');
        for (const line of lines) {
          expect(line).to.contain(`refused request ${JSON.stringify(`touch ${canary}`)}`);
        }

        const client = new NodeSSH();
        await client.connect({
          host: '127.0.0.1',
          port: sshdA().port,
          username: sshdA().user,
          privateKey: await readFile(sshdA().identityFile, 'utf8'),
          hostVerifier: (key: Buffer) =>
            key.equals(keys.parseOpenSshPublicKey(sshdA().hostKey)?.blob ?? Buffer.alloc(0)),
        });
        try {
          let message = '';
          await client.requestShell({ term: 'xterm' }).then(
            () => (message = 'a shell was granted'),
            (error: Error) => (message = error.message),
          );
          expect(message).to.match(/pseudo-terminal/i);
        } finally {
          client.dispose();
        }
      });

      it('port forwarding is refused (-L through node-ssh, -R through ssh)', async () => {
        const client = new NodeSSH();
        await client.connect({
          host: '127.0.0.1',
          port: sshdA().port,
          username: sshdA().user,
          privateKey: await readFile(sshdA().identityFile, 'utf8'),
          hostVerifier: (key: Buffer) =>
            key.equals(keys.parseOpenSshPublicKey(sshdA().hostKey)?.blob ?? Buffer.alloc(0)),
        });
        try {
          const local = await client.forwardOut('127.0.0.1', 40000, '127.0.0.1', sshdA().port).then(
            () => 'opened',
            (error: Error) => error.message,
          );
          expect(local).to.match(/open failed/i);
          const remote = await client.forwardIn('127.0.0.1', 0).then(
            () => 'bound',
            (error: Error) => error.message,
          );
          expect(remote).to.match(/unable to bind/i);
        } finally {
          client.dispose();
        }
        const pinned = join(tmp.path, 'known_hosts_fwd');
        await sshdA().writeKnownHosts(pinned);
        const result = await systemSsh(
          sshdA(),
          pinned,
          ['-o', 'ExitOnForwardFailure=yes', '-R', '0:127.0.0.1:9'],
          'version',
        );
        expect(result.exitCode).to.equal(255);
        expect(result.stderr).to.contain('remote port forwarding failed');
      });
    });
  });

  describe('runRecoveryVerb bounds (a stand-in receiver script as the forced command)', () => {
    let tmp: { path: string; cleanup: () => Promise<void> };
    let server: Sshd | undefined;
    before(async function () {
      requireSshd(this);
      tmp = await tempDir('fleet-ssh-bounds-');
      const script = join(tmp.path, 'stand-in.sh');
      await writeFile(
        script,
        [
          '#!/bin/sh',
          'case "$SSH_ORIGINAL_COMMAND" in',
          '  version) head -c 5000000 /dev/zero ;;',
          '  status) exec sleep 2 ;;',
          '  apply) sha256sum | cut -d " " -f 1; echo "stderr line" >&2; exit 3 ;;',
          'esac',
          '',
        ].join('\n'),
        { mode: 0o755 },
      );
      server = await startSshd({ forcedCommand: ['/bin/sh', script] });
    });
    after(async () => {
      await server?.stop();
      await tmp?.cleanup();
    });
    const target = (): RecoveryTarget => ({
      host: (server as Sshd).host,
      port: (server as Sshd).port,
      user: (server as Sshd).user,
      hostKey: (server as Sshd).hostKey,
      identityFile: (server as Sshd).identityFile,
    });

    it('stdin arrives byte for byte; the exit code and stderr come back', async () => {
      const payload = randomBytes(3 * 1024 * 1024 + 17);
      const result = await ssh.runRecoveryVerb(target(), 'apply', payload);
      expect(result.exitCode).to.equal(3);
      expect(result.stdout.trim()).to.equal(createHash('sha256').update(payload).digest('hex'));
      expect(result.stderr).to.equal('stderr line\n');
    });

    it('more than the stdout cap is RESPONSE_INVALID, the answer unused', async () => {
      const error = await failure(ssh.runRecoveryVerb(target(), 'version'));
      expect(error.code).to.equal('RESPONSE_INVALID');
      expect(error.message).to.contain('more than 4194304 bytes');
    });

    it('a receiver that outlives the timeout is REQUEST_TIMEOUT (exit 5)', async () => {
      const error = await failure(
        ssh.runRecoveryVerb(target(), 'status', undefined, { timeoutMs: 300 }),
      );
      expect(error.code).to.equal('REQUEST_TIMEOUT');
      expect(error.exitCode).to.equal(5);
    });
  });
});
