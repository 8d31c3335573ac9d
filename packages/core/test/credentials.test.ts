import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError, formatProblem, type Problem } from '../src/errors.js';
import {
  defaultCredentialsPath,
  loadCredentials,
  sshIdentityFor,
  tokenFor,
} from '../src/repo/credentials.js';

async function rejected(promise: Promise<unknown>): Promise<FleetError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError rejection');
}

const TOKEN = 'flt_3a9c2e7b41d85f06aa13c9e2b7d4f6e1';
const valid = (token = TOKEN): string =>
  JSON.stringify({ version: 1, hosts: { 'node-01': { token } } });

describe('repo/credentials', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-credentials-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes a credentials file with exactly `mode` (whatever the umask). */
  async function put(text: string, mode = 0o600): Promise<string> {
    const path = join(dir, 'credentials.json');
    await writeFile(path, text);
    await chmod(path, mode);
    return path;
  }

  describe('defaultCredentialsPath', () => {
    it('is ~/.config/fleet/credentials.json unless FLEET_CREDENTIALS is set (and not empty)', () => {
      expect(defaultCredentialsPath({}, '/home/u')).to.equal(
        '/home/u/.config/fleet/credentials.json',
      );
      expect(defaultCredentialsPath({ FLEET_CREDENTIALS: '' }, '/home/u')).to.equal(
        '/home/u/.config/fleet/credentials.json',
      );
      expect(defaultCredentialsPath({ FLEET_CREDENTIALS: '/c.json' }, '/home/u')).to.equal(
        '/c.json',
      );
    });
  });

  describe('file mode (checked on the open descriptor)', () => {
    for (const mode of [0o600, 0o400]) {
      it(`accepts mode ${mode.toString(8).padStart(4, '0')}`, async () => {
        const credentials = await loadCredentials(await put(valid(), mode), 'linux');
        expect(credentials).to.deep.equal({ version: 1, hosts: { 'node-01': { token: TOKEN } } });
      });
    }

    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o620, 0o602, 0o610]) {
      const shown = mode.toString(8).padStart(4, '0');
      it(`refuses mode ${shown} with CREDENTIALS_INSECURE (exit 4) naming the mode`, async () => {
        const path = await put(valid(), mode);
        const error = await rejected(loadCredentials(path, 'linux'));
        expect(error.code).to.equal('CREDENTIALS_INSECURE');
        expect(error.exitCode).to.equal(4);
        expect(error.message)
          .to.contain(`mode ${shown}`)
          .and.contain(path)
          .and.contain('chmod 600');
        expect(error.message).to.not.contain(TOKEN);
      });
    }

    it('does not apply POSIX modes on win32', async () => {
      const credentials = await loadCredentials(await put(valid(), 0o644), 'win32');
      expect(tokenFor(credentials, 'node-01', 'x')).to.equal(TOKEN);
    });
  });

  describe('missing and unreadable files', () => {
    it('a missing file is CREDENTIALS_MISSING (exit 4) naming the path and FLEET_CREDENTIALS', async () => {
      const path = join(dir, 'nope.json');
      const error = await rejected(loadCredentials(path, 'linux'));
      expect(error.code).to.equal('CREDENTIALS_MISSING');
      expect(error.exitCode).to.equal(4);
      expect(error.message).to.contain(path).and.contain('FLEET_CREDENTIALS');
    });

    it('a directory is CREDENTIALS_INVALID, not a crash', async () => {
      const path = join(dir, 'credentials.d');
      await mkdir(path, { mode: 0o700 });
      const error = await rejected(loadCredentials(path, 'linux'));
      expect(error.code).to.equal('CREDENTIALS_INVALID');
      expect(error.message).to.contain('not a regular file');
    });
  });

  describe('content: CREDENTIALS_INVALID, never echoing a token', () => {
    const cases: [title: string, text: string, message: RegExp][] = [
      [
        'invalid JSON',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}"}}`,
        /is not valid JSON/,
      ],
      [
        'a trailing comma',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}"},}}`,
        /is not valid JSON/,
      ],
      [
        'a duplicate key',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}","token":"${TOKEN}x"}}}`,
        /duplicate key "token"/,
      ],
      [
        'a duplicate host',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}"},"node-01":{"token":"${TOKEN}"}}}`,
        /duplicate key "node-01"/,
      ],
      [
        'a __proto__ key',
        `{"version":1,"hosts":{"__proto__":{"token":"${TOKEN}"}}}`,
        /forbidden key "__proto__"/,
      ],
      ['a short token', valid(TOKEN.slice(0, 15)), /is invalid/],
      [
        'a numeric token',
        '{"version":1,"hosts":{"node-01":{"token":12345678901234567890}}}',
        /is invalid/,
      ],
      [
        'an unknown version',
        `{"version":2,"hosts":{"node-01":{"token":"${TOKEN}"}}}`,
        /is invalid/,
      ],
      ['an unknown field', `{"version":1,"hosts":{},"token":"${TOKEN}"}`, /is invalid/],
      ['a bad host name', `{"version":1,"hosts":{"Node 01":{"token":"${TOKEN}"}}}`, /is invalid/],
      [
        'a relative ssh.identityFile',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}","ssh":{"identityFile":"id_ed25519"}}}}`,
        /is invalid/,
      ],
      [
        'a private key inline instead of a path',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}","ssh":{"privateKey":"-----BEGIN"}}}}`,
        /is invalid/,
      ],
      [
        'an ssh.identityFile with a newline',
        `{"version":1,"hosts":{"node-01":{"token":"${TOKEN}","ssh":{"identityFile":"/k\\n/x"}}}}`,
        /is invalid/,
      ],
    ];
    for (const [title, text, message] of cases) {
      it(title, async () => {
        const path = await put(text);
        const error = await rejected(loadCredentials(path, 'linux'));
        expect(error.code).to.equal('CREDENTIALS_INVALID');
        expect(error.exitCode).to.equal(2);
        expect(error.message).to.match(message).and.contain(path);
        const everything = JSON.stringify(error.toEnvelope());
        expect(everything).to.not.contain(TOKEN.slice(0, 15));
        expect(everything).to.not.contain('1234567890');
      });
    }

    it("a token cut short: one line naming the file, the field and the host, not zod's words", async () => {
      const path = await put(valid('too-short'));
      const error = await rejected(loadCredentials(path, 'linux'));
      expect(error.problems).to.have.length(1);
      expect(formatProblem(error.problems[0] as Problem)).to.equal(
        `${path}: hosts.node-01.token: the token for host node-01 is too short (fleet's tokens have 16 characters at least): paste the whole token \`fleet token issue\` printed`,
      );
    });

    it('names the field of a schema problem', async () => {
      const error = await rejected(loadCredentials(await put(valid('too-short')), 'linux'));
      expect(error.problems[0]).to.include({ path: 'hosts.node-01.token' });
    });
  });

  describe('ssh.identityFile (the recovery path key, by path)', () => {
    it('is accepted as an absolute path and returned by sshIdentityFor', async () => {
      const text = JSON.stringify({
        version: 1,
        hosts: {
          'node-01': { token: TOKEN, ssh: { identityFile: '/home/op/.ssh/fleet_ed25519' } },
        },
      });
      const credentials = await loadCredentials(await put(text), 'linux');
      expect(sshIdentityFor(credentials, 'node-01', '/c.json')).to.equal(
        '/home/op/.ssh/fleet_ed25519',
      );
    });

    it('a host without one is CREDENTIALS_MISSING (exit 4) naming host and file', () => {
      const credentials = { version: 1 as const, hosts: { 'node-01': { token: TOKEN } } };
      for (const host of ['node-01', 'node-02', '__proto__']) {
        try {
          sshIdentityFor(credentials, host, '/c.json');
          expect.fail('expected CREDENTIALS_MISSING');
        } catch (error) {
          expect((error as FleetError).code).to.equal('CREDENTIALS_MISSING');
          expect((error as FleetError).exitCode).to.equal(4);
          expect((error as Error).message)
            .to.contain(host)
            .and.contain('/c.json');
        }
      }
    });
  });

  describe('tokenFor', () => {
    const credentials = { version: 1 as const, hosts: { 'node-01': { token: TOKEN } } };

    it('returns the host token', () => {
      expect(tokenFor(credentials, 'node-01', '/c.json')).to.equal(TOKEN);
    });

    for (const host of ['node-02', 'constructor', '__proto__', 'toString']) {
      it(`a host without a token (${host}) is CREDENTIALS_MISSING (exit 4) naming host and file`, () => {
        try {
          tokenFor(credentials, host, '/c.json');
          expect.fail('expected CREDENTIALS_MISSING');
        } catch (error) {
          expect((error as FleetError).code).to.equal('CREDENTIALS_MISSING');
          expect((error as FleetError).exitCode).to.equal(4);
          expect((error as Error).message).to.equal(`no token for host ${host} in /c.json`);
        }
      });
    }
  });
});
