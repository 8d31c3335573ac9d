/**
 * `adopt --promote` decisions (contract §8.5), with the node reads given as a function: the
 * promoted canonical must render back to the adopted host's live file, and every other host whose
 * view it changes must then equal its own live file, unless accepted.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { FleetError } from '../src/errors.js';
import type { ReadLive } from '../src/config/drift.js';
import type { LiveFile } from '../src/config/file-items.js';
import { checkPromotion, promotedCanonical, promotionRefusal } from '../src/config/promote.js';
import { domainRuntime } from '../src/config/domain-runtime.js';
import { wholeFileInstaller } from '../src/installers/whole-file.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import { repoFromTexts } from '../src/repo/load.js';

const declaration: DomainDeclaration = {
  domain: 'demo',
  description: 'demo',
  files: [
    { id: 'app.conf', path: '~/.app.conf', canonical: 'app.conf', kind: 'whole', format: 'text' },
    {
      id: 'block.conf',
      path: '~/.block.conf',
      canonical: 'app.conf',
      kind: 'block',
      format: 'text',
      markers: { begin: '# begin', end: '# end' },
    },
  ],
  hostVariables: ['node_id'],
  coupling: { kind: 'none' },
};
const whole = declaration.files[0] as (typeof declaration.files)[number];
const hosts = ['alpha', 'beta', 'gamma'];
const repo = repoFromTexts(
  '/repo',
  `apiVersion: fleet/v1\ncanonicalVersion: 1.0.0\nhosts:\n${hosts
    .map(
      (h, i) =>
        `  ${h}:\n    controller: http://127.0.0.1:${7701 + i}\n    platform: linux\n    supervisor: lab\n    domains: [demo]\n`,
    )
    .join('')}`,
  hosts.map((h) => ({ entry: `${h}.yaml`, text: `node_id: ${h}\n` })),
);
// Only the whole file is read in these cases (the block file would need an installer to view it).
const onlyWhole: DomainDeclaration = { ...declaration, files: [whole] };
const domains = new Map([['demo', domainRuntime(onlyWhole, wholeFileInstaller('demo'))]]);
const old = 'id = {{ host.node_id }}\nport = 1\n';
const snapshot = { atRef: new Map([['domains/demo/app.conf', old]]) };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const present = (content: string): LiveFile => ({ kind: 'present', content, sha256: sha(content) });

/** Hosts answer from a table (the text `unreachable`: the read fails). */
const reads =
  (table: Record<string, string>): ReadLive =>
  (host, targets) => {
    const answer = table[host];
    if (answer === 'unreachable') {
      return Promise.reject(new FleetError('HOST_UNREACHABLE', `${host}: connection refused`));
    }
    return Promise.resolve(new Map(targets.map((t) => [t.path, present(answer ?? '')])));
  };

describe('adopt --promote: what may become the canonical', () => {
  const input = (table: Record<string, string>, live: string) => ({
    repo,
    domains,
    snapshot,
    host: 'alpha',
    declaration: onlyWhole,
    file: whole,
    newCanonical: 'id = {{ host.node_id }}\nport = 2\n',
    liveManaged: live,
    readLive: reads(table),
  });

  it('lists every other host the promotion would put into drift; accepted ones are let through', async () => {
    const check = await checkPromotion(
      input(
        { beta: 'id = beta\nport = 1\n', gamma: 'id = gamma\nport = 2\n' },
        'id = alpha\nport = 2\n',
      ),
    );
    // gamma already holds what the promoted canonical renders for it: no drift.
    expect(check.drift).to.deep.equal([
      { host: 'beta', path: '~/.app.conf', why: 'would differ from its live file' },
    ]);
    const refused = promotionRefusal(check, []);
    expect([refused?.code, refused?.exitCode]).to.deep.equal(['PROMOTE_REFUSED', 7]);
    expect(refused?.suggestions[0]).to.contain('--accept-drift-on beta');
    expect(promotionRefusal(check, ['beta'])).to.equal(null);
  });

  it('counts a host it cannot read as drifting: nothing is assumed', async () => {
    const check = await checkPromotion(
      input({ beta: 'unreachable', gamma: 'id = gamma\nport = 2\n' }, 'id = alpha\nport = 2\n'),
    );
    expect(check.drift).to.deep.equal([
      { host: 'beta', path: '~/.app.conf', why: 'cannot be read (HOST_UNREACHABLE)' },
    ]);
  });

  it('refuses a canonical that would not render back to the adopted host (a literal placeholder)', async () => {
    // alpha's live file holds `{{ host.node_id }}` literally: promoted, it would render as alpha.
    const promoted = { ...input({}, 'id = {{ host.node_id }}\nport = 2\n') };
    await checkPromotion(promoted).then(
      () => expect.fail('expected PROMOTE_REFUSED'),
      (error: FleetError) => {
        expect(error.code).to.equal('PROMOTE_REFUSED');
        expect(error.message).to.contain('would not render back to alpha:~/.app.conf');
      },
    );
  });

  it('writes a whole file as it is; a block file only through the adopter, into the section', () => {
    expect(
      promotedCanonical({ declaration, file: whole, canonical: old, candidate: 'x\n' }),
    ).to.equal('x\n');
    const block = declaration.files[1] as (typeof declaration.files)[number];
    expect(() => promotedCanonical({ declaration, file: block, canonical: old, candidate: 'x\n' }))
      .to.throw(/cannot promote a block/)
      .with.property('code', 'DOMAIN_BEHAVIOUR_ABSENT');
    const adopter = {
      domain: 'demo',
      candidate: () => '',
      mirrorPath: () => '',
      promote: (_f: unknown, canonical: string, candidate: string) =>
        canonical.replace('port = 1\n', candidate),
    };
    expect(
      promotedCanonical({
        declaration,
        file: block,
        canonical: old,
        candidate: 'port = 9\n',
        adopter,
      }),
    ).to.equal('id = {{ host.node_id }}\nport = 9\n');
  });
});
