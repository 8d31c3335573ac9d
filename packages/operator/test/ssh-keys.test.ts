/**
 * OpenSSH public keys as fleet.yaml pins them and the recovery key's `authorized_keys` line
 * (contract §12, `bootstrap apply --recover`), as tables: which texts are one public key, the
 * fingerprint `ssh-keygen -l` prints for it, the type a key blob names, and how each argument of
 * the forced command is written into the line — or why it is refused. The two real keys were made
 * with `ssh-keygen -t ed25519` and `ssh-keygen -t ecdsa -b 256` (OpenSSH 9.2); their fingerprints
 * are what `ssh-keygen -lf` printed for them, and it read a line made by `authorizedKeysLine` (with
 * a quoted argument) back with the ed25519 key's fingerprint. Pure: no sshd, no ssh client.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { AUTHORIZED_KEYS_COMMENT, authorizedKeysLine } from '../src/bootstrap/authorized-keys.js';
import { blobType, parseOpenSshPublicKey, sshFingerprint } from '../src/bootstrap/ssh-keys.js';

const ED25519_BASE64 = 'AAAAC3NzaC1lZDI1NTE5AAAAIFEaxZaM6YCgTSgNIfvU2vYHCDBoV9qR5Ph/MJGzTeHB';
const ED25519 = `ssh-ed25519 ${ED25519_BASE64}`;
const ED25519_FINGERPRINT = 'SHA256:YCwtDeKabIaJcXOtZMifQzSdxk24VBWpZAqWvOlPjZs';
const ECDSA_BASE64 =
  'AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBBuHwbs3JyWK2qb3qtLDAviBPQsxLHHkisixYpPI8hKA8yeMB5nUTW2yWr3Pgf/qAdyQ+93RKYWusaJeXdpxOyM=';
const ECDSA = `ecdsa-sha2-nistp256 ${ECDSA_BASE64}`;
const ECDSA_FINGERPRINT = 'SHA256:BD7nohshQdeU2UFwz/ag1FbzHsZPbkptWl6qYTRpmHg';

/** A key blob of `type` (SSH wire format: length-prefixed type, then 32 bytes of key material). */
function blobOf(type: string): Buffer {
  const name = Buffer.from(type, 'latin1');
  const material = Buffer.alloc(36);
  material.writeUInt32BE(32, 0);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(name.length, 0);
  return Buffer.concat([length, name, material]);
}
const keyOf = (type: string) => `${type} ${blobOf(type).toString('base64')}`;
/** What `ssh-keygen -l` prints for a blob: `SHA256:` and the unpadded base64 of its sha256. */
const fingerprintOf = (blob: Buffer) =>
  `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;

describe('parseOpenSshPublicKey: which texts are one OpenSSH public key', () => {
  const cases: {
    name: string;
    text: string;
    expected: [type: string, fingerprint: string] | null;
  }[] = [
    { name: 'an ed25519 key', text: ED25519, expected: ['ssh-ed25519', ED25519_FINGERPRINT] },
    {
      name: 'with a comment (dropped)',
      text: `${ED25519} alice@laptop`,
      expected: ['ssh-ed25519', ED25519_FINGERPRINT],
    },
    {
      name: 'with blanks and a line break around it (trimmed)',
      text: `  ${ED25519}\r\n`,
      expected: ['ssh-ed25519', ED25519_FINGERPRINT],
    },
    { name: 'an ecdsa key', text: ECDSA, expected: ['ecdsa-sha2-nistp256', ECDSA_FINGERPRINT] },
    {
      name: 'an ecdsa key as ssh-keygen writes it without a comment (a trailing blank)',
      text: `${ECDSA} `,
      expected: ['ecdsa-sha2-nistp256', ECDSA_FINGERPRINT],
    },
    {
      name: 'a security-key type parses (what may be pinned is decided elsewhere)',
      text: keyOf('sk-ssh-ed25519@openssh.com'),
      expected: ['sk-ssh-ed25519@openssh.com', fingerprintOf(blobOf('sk-ssh-ed25519@openssh.com'))],
    },
    {
      name: 'the base64 without its padding',
      text: `ecdsa-sha2-nistp256 ${ECDSA_BASE64.replace(/=$/, '')}`,
      expected: null,
    },
    { name: 'a type the blob does not name', text: `ssh-rsa ${ED25519_BASE64}`, expected: null },
    { name: 'a type in upper case', text: `SSH-ED25519 ${ED25519_BASE64}`, expected: null },
    { name: 'options before the key', text: `restrict ${ED25519}`, expected: null },
    { name: 'the base64 alone', text: ED25519_BASE64, expected: null },
    { name: 'the type alone', text: 'ssh-ed25519', expected: null },
    {
      name: 'two blanks between type and key',
      text: `ssh-ed25519  ${ED25519_BASE64}`,
      expected: null,
    },
    { name: 'a tab between type and key', text: `ssh-ed25519\t${ED25519_BASE64}`, expected: null },
    { name: 'a second line after the comment', text: `${ED25519} a\nb`, expected: null },
    { name: 'a blob too short to name a type', text: 'ssh-ed25519 AAAA', expected: null },
    { name: 'padding only', text: 'ssh-ed25519 ====', expected: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const key = parseOpenSshPublicKey(c.text);
      expect(key && [key.type, sshFingerprint(key.blob)]).to.deep.equal(c.expected ?? undefined);
    });
  }
});

describe('blobType: the type string a key blob starts with', () => {
  const withLength = (length: number, rest: number[]) => Buffer.from([0, 0, 0, length, ...rest]);
  const cases: { name: string; blob: Buffer; type: string | undefined }[] = [
    { name: 'an ed25519 blob', blob: Buffer.from(ED25519_BASE64, 'base64'), type: 'ssh-ed25519' },
    { name: 'a one-byte type', blob: withLength(1, [0x61]), type: 'a' },
    { name: 'empty', blob: Buffer.alloc(0), type: undefined },
    { name: 'shorter than its length field', blob: Buffer.from([0, 0, 0]), type: undefined },
    { name: 'a zero length', blob: withLength(0, []), type: undefined },
    { name: 'a length past the end', blob: withLength(5, [0x61, 0x62]), type: undefined },
    {
      name: 'a length over 64',
      blob: withLength(65, new Array<number>(65).fill(0x61)),
      type: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(blobType(c.blob)).to.equal(c.type);
    });
  }
});

describe("authorizedKeysLine: the recovery key's line, argument by argument", () => {
  const line = (command: string) =>
    `restrict,command="${command}" ${ED25519} ${AUTHORIZED_KEYS_COMMENT}`;
  const cases: { name: string; argument: string; written: string }[] = [
    { name: 'a plain path', argument: '/home/fleet', written: '/home/fleet' },
    {
      name: 'every plain punctuation mark',
      argument: 'a_b.c/d:e=f@g%h+i,j-k',
      written: 'a_b.c/d:e=f@g%h+i,j-k',
    },
    { name: 'a blank', argument: '/opt/my fleet/run.js', written: "'/opt/my fleet/run.js'" },
    { name: 'a variable is not expanded', argument: '/home/$USER', written: "'/home/$USER'" },
    { name: 'command substitution is not run', argument: '`id`', written: "'`id`'" },
    { name: 'a command separator', argument: 'a;reboot', written: "'a;reboot'" },
    { name: 'a glob', argument: '*', written: "'*'" },
    { name: 'a tilde', argument: '~', written: "'~'" },
    { name: 'history expansion', argument: '!!', written: "'!!'" },
    { name: 'a non-ASCII letter', argument: '/home/josé', written: "'/home/josé'" },
  ];
  for (const c of cases) {
    it(`${c.name}: ${JSON.stringify(c.argument)} is written ${c.written}`, () => {
      expect(
        authorizedKeysLine({
          publicKey: `${ED25519} operator@seat`,
          command: ['/usr/bin/node', c.argument],
        }),
      ).to.equal(line(`/usr/bin/node ${c.written}`));
    });
  }

  const refusedArgument = (text: string) =>
    `authorizedKeysLine: command argument 1 (${JSON.stringify(text)}) holds a quote, a backslash or a control character`;
  const refusals: { name: string; argument: string; message: string }[] = [
    { name: 'a tab', argument: 'a\tb', message: refusedArgument('a\tb') },
    { name: 'an escape sequence', argument: 'a\u001b[2J', message: refusedArgument('a\u001b[2J') },
    { name: 'DEL', argument: 'a\u007f', message: refusedArgument('a\u007f') },
    { name: 'a carriage return', argument: 'a\rb', message: refusedArgument('a\rb') },
    { name: 'a double quote', argument: 'a"b', message: refusedArgument('a"b') },
    { name: 'a single quote', argument: "a'b", message: refusedArgument("a'b") },
    { name: 'a backslash', argument: 'a\\b', message: refusedArgument('a\\b') },
    {
      name: 'an empty argument',
      argument: '',
      message: 'authorizedKeysLine: command argument 1 is empty',
    },
  ];
  for (const c of refusals) {
    it(`refuses ${c.name}`, () => {
      expect(() =>
        authorizedKeysLine({ publicKey: ED25519, command: ['/usr/bin/node', c.argument] }),
      )
        .to.throw(Error)
        .with.property('message', c.message);
    });
  }

  const notOneKey =
    'authorizedKeysLine: the public key must be one OpenSSH public key (ssh-ed25519 AAAA…), no options';
  const keys: { name: string; publicKey: string; expected: string | Error }[] = [
    {
      name: 'an ecdsa key',
      publicKey: ECDSA,
      expected: `restrict,command="/bin/true" ${ECDSA} ${AUTHORIZED_KEYS_COMMENT}`,
    },
    {
      name: 'an ecdsa-sha2-nistp384 key',
      publicKey: keyOf('ecdsa-sha2-nistp384'),
      expected: `restrict,command="/bin/true" ${keyOf('ecdsa-sha2-nistp384')} ${AUTHORIZED_KEYS_COMMENT}`,
    },
    {
      name: "an ed25519 key with a comment of its own (replaced by fleet's)",
      publicKey: `${ED25519} alice@laptop`,
      expected: `restrict,command="/bin/true" ${ED25519} ${AUTHORIZED_KEYS_COMMENT}`,
    },
    {
      name: 'a security-key type',
      publicKey: keyOf('sk-ssh-ed25519@openssh.com'),
      expected: new Error(notOneKey),
    },
    { name: 'a DSA key', publicKey: keyOf('ssh-dss'), expected: new Error(notOneKey) },
    {
      name: 'a key with options',
      publicKey: `command="sh" ${ED25519}`,
      expected: new Error(notOneKey),
    },
    {
      name: 'a key followed by a line break',
      publicKey: `${ED25519}\n`,
      expected: new Error(
        'authorizedKeysLine: the public key holds a control character (one line only)',
      ),
    },
    {
      name: 'a comment holding a tab',
      publicKey: `${ED25519} a\tb`,
      expected: new Error(
        'authorizedKeysLine: the public key holds a control character (one line only)',
      ),
    },
  ];
  for (const c of keys) {
    it(`${c.expected instanceof Error ? 'refuses' : 'takes'} ${c.name}`, () => {
      const run = () => authorizedKeysLine({ publicKey: c.publicKey, command: ['/bin/true'] });
      if (c.expected instanceof Error)
        expect(run).to.throw(Error).with.property('message', c.expected.message);
      else expect(run()).to.equal(c.expected);
    });
  }

  it('refuses an empty command', () => {
    expect(() => authorizedKeysLine({ publicKey: ED25519, command: [] }))
      .to.throw(Error)
      .with.property('message', 'authorizedKeysLine: the command is empty');
  });
});
