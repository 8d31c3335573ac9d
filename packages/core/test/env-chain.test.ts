import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../src/errors.js';
import {
  ENV_DIR,
  ENV_FILE,
  createEnvChainLoader,
  loadEnvChain,
  parseEnvFile,
  redactSecrets,
  resolveSecrets,
} from '../src/secrets/env-chain.js';

function thrown(fn: () => unknown): FleetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FleetError) return error;
    throw error;
  }
  return expect.fail('expected a FleetError to be thrown');
}

const FILE = '~/.config/fleet/env';
const entries = (text: string): [string, string][] => [...parseEnvFile(text, FILE)];

describe('secrets/env-chain', () => {
  describe('parseEnvFile', () => {
    const cases: [title: string, text: string, expected: [string, string][]][] = [
      [
        'KEY=VALUE lines',
        'A=1\nB=two\n',
        [
          ['A', '1'],
          ['B', 'two'],
        ],
      ],
      ['comments and blank lines', '# c\n\n  # indented\nA=1\n\n', [['A', '1']]],
      [
        'an export prefix',
        'export A=1\nexport   B=2',
        [
          ['A', '1'],
          ['B', '2'],
        ],
      ],
      ['double quotes removed', 'A="two words"', [['A', 'two words']]],
      ['single quotes removed', "A='x y'", [['A', 'x y']]],
      ['no escapes interpreted inside quotes', 'A="a\\nb"', [['A', 'a\\nb']]],
      ['an unbalanced quote is kept', 'A="open', [['A', '"open']]],
      ['a lone quote is kept', 'A="', [['A', '"']]],
      ['mismatched quotes are kept', `A="x'`, [['A', `"x'`]]],
      ['= inside the value', 'URL=postgres://u:p@h/db?a=b', [['URL', 'postgres://u:p@h/db?a=b']]],
      ['an empty value', 'A=', [['A', '']]],
      ['spaces around key and value trimmed', '  A =  spaced  ', [['A', 'spaced']]],
      ['a UTF-8 BOM ignored', '\ufeffA=1', [['A', '1']]],
      [
        'CRLF line endings',
        'A=1\r\nB=2\r\n',
        [
          ['A', '1'],
          ['B', '2'],
        ],
      ],
      ['a later line overrides an earlier one', 'A=1\nA=2', [['A', '2']]],
      ['a key that merely starts with export', 'exportA=1', [['exportA', '1']]],
      ['an empty file', '', []],
    ];
    for (const [title, text, expected] of cases) {
      it(title, () => {
        expect(entries(text)).to.deep.equal(expected);
      });
    }

    const SECRET = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
    const bad: [title: string, text: string, line: number][] = [
      ['a line without =', `A=1\n${SECRET}\n`, 2],
      ['an empty key', `A=1\n\n=${SECRET}`, 3],
      ['a key starting with a digit', `1A=${SECRET}`, 1],
      ['a key with a space', `A B=${SECRET}`, 1],
      ['a key with a dash', `# x\nAPI-KEY=${SECRET}`, 2],
      ['a bad line after CRLF lines', `A=1\r\nB=2\r\n${SECRET}\r\n`, 3],
    ];
    for (const [title, text, line] of bad) {
      it(`refuses ${title}, naming file:line but never the value`, () => {
        const error = thrown(() => parseEnvFile(text, FILE));
        expect(error.code).to.equal('ENV_FILE_INVALID');
        expect(error.message).to.contain(`${FILE}:${line}:`);
        expect(error.message).to.not.contain(SECRET);
        expect(JSON.stringify(error.toEnvelope())).to.not.contain(SECRET);
      });
    }
  });

  describe('loadEnvChain', () => {
    let home: string;
    beforeEach(async () => {
      home = await mkdtemp(join(tmpdir(), 'fleet-env-'));
    });
    afterEach(async () => {
      await rm(home, { recursive: true, force: true });
    });

    async function put(path: string, text: string): Promise<void> {
      await mkdir(join(home, path, '..'), { recursive: true });
      await writeFile(join(home, path), text);
    }

    it('knows where the chain lives', () => {
      expect(ENV_FILE).to.equal('.config/fleet/env');
      expect(ENV_DIR).to.equal('.config/fleet/env.d');
    });

    it('is empty when no file exists', async () => {
      expect((await loadEnvChain(home)).size).to.equal(0);
    });

    it('reads env.d without the main env file', async () => {
      await put(`${ENV_DIR}/a.env`, 'A=1');
      expect([...(await loadEnvChain(home))]).to.deep.equal([['A', '1']]);
    });

    it('reads env then env.d/*.env in name order, a later file overriding an earlier one', async () => {
      await put(ENV_FILE, 'A=base\nB=base\nC=base\nD=base');
      // written out of order: the chain sorts by name, not by creation
      await put(`${ENV_DIR}/20-b.env`, 'B=20\nC=20');
      await put(`${ENV_DIR}/10-a.env`, 'B=10\nC=10\nE=10');
      await put(`${ENV_DIR}/30-c.env`, 'C=30');
      const chain = await loadEnvChain(home);
      expect(Object.fromEntries(chain)).to.deep.equal({
        A: 'base',
        B: '20',
        C: '30',
        D: 'base',
        E: '10',
      });
    });

    it('sorts by name, not by directory order (many files, created shuffled)', async () => {
      const names = Array.from({ length: 24 }, (_, i) => String(i + 1).padStart(2, '0'));
      const shuffled = names.map((name, i) => names[(i * 7) % names.length] as string);
      for (const name of shuffled)
        await put(`${ENV_DIR}/${name}.env`, `LAST=${name}\nFROM_${name}=x`);
      const chain = await loadEnvChain(home);
      expect(chain.get('LAST')).to.equal('24');
      expect(chain.size).to.equal(25);
    });

    it('ignores files in env.d that are not *.env, and hidden ones', async () => {
      await put(ENV_FILE, 'A=base');
      await put(`${ENV_DIR}/z.env.bak`, 'A=bak');
      await put(`${ENV_DIR}/notes.txt`, 'A=txt');
      await put(`${ENV_DIR}/.hidden.env`, 'A=hidden');
      await put(`${ENV_DIR}/README`, 'not an env file at all');
      expect(Object.fromEntries(await loadEnvChain(home))).to.deep.equal({ A: 'base' });
    });

    it('names the chain file of a bad line, ~/-relative', async () => {
      await put(`${ENV_DIR}/10-a.env`, 'A=1\nnot a line');
      try {
        await loadEnvChain(home);
        expect.fail('expected ENV_FILE_INVALID');
      } catch (error) {
        expect((error as FleetError).code).to.equal('ENV_FILE_INVALID');
        expect((error as Error).message).to.contain(`~/${ENV_DIR}/10-a.env:2`);
      }
    });
  });

  describe('createEnvChainLoader (the chain kept until a file of it changes)', () => {
    let home: string;
    beforeEach(async () => {
      home = await mkdtemp(join(tmpdir(), 'fleet-env-cache-'));
    });
    afterEach(async () => {
      await rm(home, { recursive: true, force: true });
    });
    async function put(path: string, text: string): Promise<void> {
      await mkdir(join(home, path, '..'), { recursive: true });
      await writeFile(join(home, path), text);
    }

    it('answers an unchanged chain without reading it again (the same values)', async () => {
      await put(ENV_FILE, 'A=base');
      await put(`${ENV_DIR}/10-a.env`, 'B=10');
      const load = createEnvChainLoader(home);
      const first = await load();
      expect(Object.fromEntries(first)).to.deep.equal({ A: 'base', B: '10' });
      expect(await load()).to.equal(first);
    });

    it('sees a file rewritten in place with the same size, even with its mtime put back', async () => {
      await put(ENV_FILE, 'TOKEN=aaaaaaaa');
      const load = createEnvChainLoader(home);
      expect((await load()).get('TOKEN')).to.equal('aaaaaaaa');
      const before = await stat(join(home, ENV_FILE));
      await writeFile(join(home, ENV_FILE), 'TOKEN=bbbbbbbb');
      await utimes(join(home, ENV_FILE), before.atime, before.mtime);
      expect((await load()).get('TOKEN')).to.equal('bbbbbbbb');
    });

    it('sees a file added to env.d, one replaced by a rename, one removed, and the env file created', async () => {
      const load = createEnvChainLoader(home);
      expect((await load()).size).to.equal(0);
      await put(`${ENV_DIR}/10-a.env`, 'A=1');
      expect(Object.fromEntries(await load())).to.deep.equal({ A: '1' });
      await put(`${ENV_DIR}/.10-a.tmp`, 'A=2');
      await rename(join(home, ENV_DIR, '.10-a.tmp'), join(home, ENV_DIR, '10-a.env'));
      expect(Object.fromEntries(await load())).to.deep.equal({ A: '2' });
      await put(`${ENV_DIR}/20-b.env`, 'A=20');
      expect(Object.fromEntries(await load())).to.deep.equal({ A: '20' });
      await unlink(join(home, ENV_DIR, '20-b.env'));
      expect(Object.fromEntries(await load())).to.deep.equal({ A: '2' });
      await put(ENV_FILE, 'BASE=yes');
      expect(Object.fromEntries(await load())).to.deep.equal({ BASE: 'yes', A: '2' });
    });

    it('keeps no chain that does not parse: every call fails until the file is fixed', async () => {
      await put(ENV_FILE, 'A=1');
      const load = createEnvChainLoader(home);
      await load();
      await put(ENV_FILE, 'A=1\nnot a line');
      for (let i = 0; i < 2; i += 1) {
        try {
          await load();
          expect.fail('expected ENV_FILE_INVALID');
        } catch (error) {
          expect((error as FleetError).code).to.equal('ENV_FILE_INVALID');
        }
      }
      await put(ENV_FILE, 'A=fixed');
      expect((await load()).get('A')).to.equal('fixed');
    });
  });

  describe('resolveSecrets', () => {
    const secrets = new Map([
      ['API_KEY', 'k-1234567'],
      ['DB_PASS', 'p@ss-word'],
    ]);

    it('replaces every secret placeholder and leaves the rest alone', () => {
      const text = 'key={{ secret.API_KEY }}\nagain={{secret.API_KEY}}\nhost={{ host.x }}\r\n';
      expect(resolveSecrets(text, secrets, 'f')).to.equal(
        'key=k-1234567\nagain=k-1234567\nhost={{ host.x }}\r\n',
      );
    });

    it('inserts values literally ($ patterns are not special)', () => {
      expect(resolveSecrets('{{ secret.S }}', new Map([['S', '$&$1$`$$x']]), 'f')).to.equal(
        '$&$1$`$$x',
      );
    });

    it('lists every missing name once and never a value', () => {
      const text =
        '{{ secret.API_KEY }} {{ secret.MISSING_B }} {{ secret.MISSING_A }} {{ secret.MISSING_B }}';
      const error = thrown(() => resolveSecrets(text, secrets, '~/.config/app/app.env'));
      expect(error.code).to.equal('SECRET_MISSING');
      expect(error.message).to.contain('~/.config/app/app.env');
      expect(error.message).to.contain('secrets MISSING_B, MISSING_A');
      expect(error.message).to.not.contain('k-1234567');
    });

    it('refuses a value under 8 characters with its name, never the value (SECRET_TOO_SHORT)', () => {
      const chain = new Map([
        ['SHORTY', 'a'],
        ['PORT', '8080'],
        ['API_KEY', 'k-1234567'],
        ['EXACTLY_8', '12345678'],
      ]);
      const error = thrown(() =>
        resolveSecrets(
          'm{{ secret.SHORTY }}tch {{ secret.PORT }} {{ secret.API_KEY }} {{ secret.SHORTY }}',
          chain,
          '~/.config/app/app.env',
        ),
      );
      expect(error.code).to.equal('SECRET_TOO_SHORT');
      expect(error.exitCode).to.equal(7);
      expect(error.message).to.contain('~/.config/app/app.env');
      expect(error.message).to.contain('secrets SHORTY, PORT');
      expect(error.message).to.not.contain('8080');
      expect(resolveSecrets('{{ secret.EXACTLY_8 }}', chain, 'f')).to.equal('12345678');
      // A short value no file uses is no error: the chain may serve other tools.
      expect(resolveSecrets('{{ secret.API_KEY }}', chain, 'f')).to.equal('k-1234567');
    });

    it('a text without secret placeholders needs no secrets', () => {
      expect(resolveSecrets('plain', new Map(), 'f')).to.equal('plain');
    });
  });

  describe('redactSecrets', () => {
    const cases: [title: string, text: string, secrets: [string, string][], expected: string][] = [
      ['one secret', 'token=abc12345', [['T', 'abc12345']], 'token={{ secret.T }}'],
      [
        'the same secret twice',
        'a=abcdefgh b=abcdefgh',
        [['T', 'abcdefgh']],
        'a={{ secret.T }} b={{ secret.T }}',
      ],
      [
        'a secret that is a substring of another: longest first',
        'short=abcdefgh long=abcdefghij',
        [
          ['SHORT', 'abcdefgh'],
          ['LONG', 'abcdefghij'],
        ],
        'short={{ secret.SHORT }} long={{ secret.LONG }}',
      ],
      [
        'order of the chain does not matter',
        'short=abcdefgh long=abcdefghij',
        [
          ['LONG', 'abcdefghij'],
          ['SHORT', 'abcdefgh'],
        ],
        'short={{ secret.SHORT }} long={{ secret.LONG }}',
      ],
      [
        'an empty value is skipped',
        'abcdefgh',
        [
          ['EMPTY', ''],
          ['B', 'bcdefgh1'],
        ],
        'abcdefgh',
      ],
      ['only empty values', 'abc', [['EMPTY', '']], 'abc'],
      ['no secrets', 'abc', [], 'abc'],
      [
        'a value under 8 characters is never redacted (m{{ secret.SHORTY }}tch)',
        'match 30 times, a 1-in-30 chance',
        [
          ['SHORTY', 'a'],
          ['THIRTY', '30'],
          ['SEVEN', 'chance!'],
        ],
        'match 30 times, a 1-in-30 chance',
      ],
      [
        'regex metacharacters are literal',
        'p=a.c+(d)*x q=abc',
        [['P', 'a.c+(d)*x']],
        'p={{ secret.P }} q=abc',
      ],
      [
        'a secret inside a URL',
        'postgres://u:s3cr3t-pw@h/db',
        [['PG', 's3cr3t-pw']],
        'postgres://u:{{ secret.PG }}@h/db',
      ],
    ];
    for (const [title, text, secrets, expected] of cases) {
      it(title, () => {
        expect(redactSecrets(text, new Map(secrets))).to.equal(expected);
      });
    }

    it('canary round trip: resolve then redact gives the template back', () => {
      const canary = randomBytes(32).toString('hex');
      const inner = canary.slice(0, 16); // a secret that is a substring of another
      const secrets = new Map([
        ['API_KEY', canary],
        ['PREFIX', inner],
        ['PG_PASS', `${canary.slice(20)}!"'`],
      ]);
      const template = [
        'API_KEY={{ secret.API_KEY }}',
        'again: "{{ secret.API_KEY }}"',
        'prefix={{ secret.PREFIX }}',
        'url=postgres://u:{{ secret.PG_PASS }}@h/db',
        'host={{ host.node_id }}',
      ].join('\r\n');
      const live = resolveSecrets(template, secrets, 'f');
      expect(live).to.contain(canary);
      const redacted = redactSecrets(live, secrets);
      expect(redacted).to.equal(template);
      expect(redacted).to.not.contain(canary).and.not.contain(inner);
    });
  });
});
