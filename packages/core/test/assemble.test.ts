import { expect } from 'chai';
import { FLEET_PLUGIN_API_VERSION } from '../src/api-version.js';
import { defineRegistration, type RegistrationParts } from '../src/define.js';
import {
  assembleRegistrations,
  type Assembly,
  type HookOutcome,
  type PluginRef,
} from '../src/registry/assemble.js';
import { domainPart, type InstallerPart } from './registration-parts.js';

/** A minimal valid domain declaration owning `~/.config/<domain>/<domain>.yaml`. */
function domain(name: string, overrides: Partial<InstallerPart> = {}): InstallerPart {
  return domainPart(name, { hostVariables: ['node_id'], ...overrides });
}

const bundled = (name: string): PluginRef => ({ name, version: '1.0.0', type: 'core' });
const user = (name: string): PluginRef => ({ name, version: '2.3.4', type: 'user' });
const ok = (plugin: PluginRef, result: unknown): HookOutcome => ({ plugin, ok: true, result });
const failed = (plugin: PluginRef, error: unknown): HookOutcome => ({ plugin, ok: false, error });
const assemble = (...outcomes: HookOutcome[]): Assembly =>
  assembleRegistrations(outcomes, FLEET_PLUGIN_API_VERSION);
const acceptedNames = (assembly: Assembly): string[] => assembly.accepted.map((a) => a.plugin.name);

/** A valid registration with one raw (untyped) change, for shapes the types would not allow. */
function mutated(mutate: (raw: Record<string, unknown>) => void): unknown {
  const raw = JSON.parse(
    JSON.stringify(defineRegistration({ installers: [domain('router')] })),
  ) as Record<string, unknown>;
  mutate(raw);
  return raw;
}
const firstFile = (raw: Record<string, unknown>): Record<string, unknown> =>
  (raw['installers'] as { files: Record<string, unknown>[] }[])[0]!.files[0]!;

describe('registry/assemble', () => {
  it('accepts a valid registration built with defineRegistration', () => {
    const registration = defineRegistration({
      installers: [domain('router')],
      adopters: [{ domain: 'router' }],
      probers: [{ id: 'router.volume', layer: 'derived', domain: 'router', description: 'volume' }],
      bootstrapAdapters: [
        { supervisor: 'systemd-user', platforms: ['linux'], description: 'unit' },
      ],
    });
    expect(registration.kind).to.equal('fleet.registration');
    expect(registration.apiVersion).to.equal(FLEET_PLUGIN_API_VERSION);
    expect(registration.installers[0]?.kind).to.equal('fleet.installer');
    const assembly = assemble(ok(bundled('@fleet/router'), registration));
    expect(assembly.problems).to.deep.equal([]);
    expect(assembly.accepted).to.have.length(1);
    expect(assembly.accepted[0]?.registration).to.deep.equal(registration);
  });

  it('accepts an empty registration and no outcomes at all', () => {
    expect(assemble(ok(user('empty'), defineRegistration({}))).accepted).to.have.length(1);
    expect(assemble()).to.deep.equal({ accepted: [], problems: [] });
  });

  describe('failures are attributed to their plugin (name@version)', () => {
    it('a hook that threw: its first message line, nothing else refused', () => {
      const assembly = assemble(
        failed(user('fleet-plugin-broken'), new Error('cannot find module x\n    at stack line')),
        ok(bundled('@fleet/router'), defineRegistration({ installers: [domain('router')] })),
      );
      expect(acceptedNames(assembly)).to.deep.equal(['@fleet/router']);
      expect(assembly.problems).to.deep.equal([
        {
          plugin: 'fleet-plugin-broken@2.3.4',
          code: 'PLUGIN_REFUSED',
          message: 'plugin fleet-plugin-broken@2.3.4 failed to register: cannot find module x',
        },
      ]);
    });

    it('a hook that threw a non-Error', () => {
      const [problem] = assemble(failed(user('p'), 'just a string')).problems;
      expect(problem?.message).to.equal('plugin p@2.3.4 failed to register: just a string');
    });

    for (const [title, result] of [
      ['undefined', undefined],
      ['a plain object', { installers: [] }],
      ['a wrong kind', { kind: 'other', apiVersion: FLEET_PLUGIN_API_VERSION }],
    ] as const) {
      it(`a hook that returned ${title}`, () => {
        const [problem] = assemble(ok(user('p'), result)).problems;
        expect(problem?.code).to.equal('PLUGIN_REFUSED');
        expect(problem?.message).to.contain('p@2.3.4').and.contain('no fleet registration');
      });
    }

    it('a foreign API version is PLUGIN_API_MISMATCH naming both versions', () => {
      const foreign = { ...defineRegistration({ installers: [domain('x')] }), apiVersion: 99 };
      const assembly = assembleRegistrations([ok(user('fleet-plugin-old'), foreign)], 3);
      expect(assembly.accepted).to.deep.equal([]);
      expect(assembly.problems).to.have.length(1);
      const [problem] = assembly.problems;
      expect(problem?.code).to.equal('PLUGIN_API_MISMATCH');
      expect(problem?.plugin).to.equal('fleet-plugin-old@2.3.4');
      expect(problem?.message).to.contain('API 99').and.contain('API 3');
    });

    it('names the API version before complaining about the shape', () => {
      const [problem] = assemble(
        ok(user('p'), { kind: 'fleet.registration', apiVersion: 0 }),
      ).problems;
      expect(problem?.code).to.equal('PLUGIN_API_MISMATCH');
    });
  });

  describe('an invalid shape refuses the whole plugin', () => {
    const cases: [title: string, result: unknown, message: RegExp][] = [
      [
        'an unknown field on a descriptor',
        mutated((raw) => ((raw['installers'] as Record<string, unknown>[])[0]!['colour'] = 'blue')),
        /installers\[0\]\.colour: unknown field/,
      ],
      [
        'an unknown field on the registration',
        mutated((raw) => (raw['extra'] = true)),
        /extra: unknown field/,
      ],
      [
        'an absolute path',
        mutated((raw) => (firstFile(raw)['path'] = '/etc/x')),
        /installers\[0\]\.files\[0\]\.path: must be a ~\/-relative path/,
      ],
      [
        'a path escaping the home',
        mutated((raw) => (firstFile(raw)['path'] = '~/../x')),
        /files\[0\]\.path: must be a ~\/-relative path/,
      ],
      // fleet's own state can never be a domain's path (contract §5.1), whatever the case.
      ...(
        [
          ['the node state', '~/.local/state/fleet/tokens.json'],
          ['the runtime generations', '~/.local/share/fleet/runtime/current'],
          ['the env file', '~/.config/fleet/env'],
          ['an env.d file', '~/.config/fleet/env.d/10-router.env'],
          ['the node policy', '~/.config/fleet/node-policy.yaml'],
          ['the credentials', '~/.config/fleet/credentials.json'],
          ['the env file in another case', '~/.Config/Fleet/ENV'],
        ] as const
      ).map(([what, path]): [string, unknown, RegExp] => [
        `a path in fleet's own state: ${what}`,
        mutated((raw) => (firstFile(raw)['path'] = path)),
        /files\[0\]\.path: .* is fleet's own state .*can never be a domain's path/,
      ]),
      [
        "a derived path in fleet's own state",
        defineRegistration({
          installers: [
            domain('a', {
              derivedPaths: [
                {
                  id: 'v',
                  path: '~/.local/state/fleet/audit.jsonl',
                  format: 'text',
                  derivedFrom: 'a.yaml',
                  description: 'd',
                },
              ],
            }),
          ],
        }),
        /derivedPaths\[0\]\.path: .* is fleet's own state/,
      ],
      [
        'a canonical path escaping the domain',
        mutated((raw) => (firstFile(raw)['canonical'] = '../other/x.yaml')),
        /files\[0\]\.canonical: must be a plain relative path/,
      ],
      [
        'a block file without markers',
        mutated((raw) => (firstFile(raw)['kind'] = 'block')),
        /files\[0\]\.markers: a block file needs markers/,
      ],
      [
        'a domain without files',
        mutated((raw) => ((raw['installers'] as Record<string, unknown>[])[0]!['files'] = [])),
        /a domain owns at least one file \(or declares its files in a repoManifest\)/,
      ],
      [
        'an upper-case domain name',
        mutated(
          (raw) => ((raw['installers'] as Record<string, unknown>[])[0]!['domain'] = 'Router'),
        ),
        /installers\[0\]\.domain/,
      ],
      [
        'a loader that is not a function',
        mutated((raw) => ((raw['installers'] as Record<string, unknown>[])[0]!['load'] = 'x.js')),
        /load: must be a function/,
      ],
      [
        'a domain declared twice in one plugin',
        defineRegistration({
          installers: [domain('a'), domain('a', { files: [{ ...domain('b').files[0]! }] })],
        }),
        /inconsistent registration: domain a declared twice/,
      ],
      [
        'an adopter for a domain the plugin does not declare',
        defineRegistration({ installers: [domain('a')], adopters: [{ domain: 'b' }] }),
        /adopter for domain b/,
      ],
      [
        'a derived path naming an unknown file',
        defineRegistration({
          installers: [
            domain('a', {
              derivedPaths: [
                { id: 'v', path: '~/v', format: 'text', derivedFrom: 'nope', description: 'd' },
              ],
            }),
          ],
        }),
        /derived path v names unknown file nope/,
      ],
    ];
    for (const [title, result, message] of cases) {
      it(title, () => {
        const assembly = assemble(ok(user('fleet-plugin-x'), result));
        expect(assembly.accepted).to.deep.equal([]);
        expect(assembly.problems).to.have.length(1);
        expect(assembly.problems[0]?.code).to.equal('PLUGIN_REFUSED');
        expect(assembly.problems[0]?.message).to.contain('fleet-plugin-x@2.3.4').and.match(message);
      });
    }
  });

  describe('claims: the first claimant keeps a domain, path, prober or supervisor', () => {
    it('a bundled plugin wins a duplicate domain whatever the outcome order', () => {
      const core = ok(
        bundled('zzz-bundled'),
        defineRegistration({ installers: [domain('router')] }),
      );
      const other = ok(user('aaa-user'), defineRegistration({ installers: [domain('router')] }));
      for (const outcomes of [
        [core, other],
        [other, core],
      ]) {
        const assembly = assemble(...outcomes);
        expect(acceptedNames(assembly)).to.deep.equal(['zzz-bundled']);
        expect(assembly.problems).to.have.length(1);
        expect(assembly.problems[0]?.plugin).to.equal('aaa-user@2.3.4');
        expect(assembly.problems[0]?.message).to.equal(
          'plugin aaa-user@2.3.4 claims domain router, already owned by plugin zzz-bundled@1.0.0',
        );
      }
    });

    it('a refused plugin contributes nothing, not even its other domains', () => {
      const core = ok(bundled('core'), defineRegistration({ installers: [domain('router')] }));
      const other = ok(
        user('other'),
        defineRegistration({ installers: [domain('extra'), domain('router')] }),
      );
      const assembly = assemble(other, core);
      expect(acceptedNames(assembly)).to.deep.equal(['core']);
      const third = ok(user('third'), defineRegistration({ installers: [domain('extra')] }));
      expect(acceptedNames(assemble(other, core, third))).to.deep.equal(['core', 'third']);
    });

    const collisions: [title: string, a: RegistrationParts, b: RegistrationParts, claim: string][] =
      [
        [
          'the same file path in two domains',
          { installers: [domain('a')] },
          { installers: [domain('b', { files: [{ ...domain('a').files[0]!, id: 'b' }] })] },
          'path ~/.config/a/a.yaml',
        ],
        [
          'a derived path on another plugin file path',
          { installers: [domain('a')] },
          {
            installers: [
              domain('b', {
                derivedPaths: [
                  {
                    id: 'v',
                    path: '~/.config/a/a.yaml',
                    format: 'yaml',
                    derivedFrom: 'b.yaml',
                    description: 'd',
                  },
                ],
              }),
            ],
          },
          'path ~/.config/a/a.yaml',
        ],
        [
          'the same prober id',
          { probers: [{ id: 'tools.node', layer: 'version', description: 'd' }] },
          { probers: [{ id: 'tools.node', layer: 'version', description: 'd' }] },
          'prober tools.node',
        ],
        [
          'the same supervisor',
          {
            bootstrapAdapters: [{ supervisor: 'launchd', platforms: ['darwin'], description: 'd' }],
          },
          {
            bootstrapAdapters: [{ supervisor: 'launchd', platforms: ['darwin'], description: 'd' }],
          },
          'bootstrap adapter launchd',
        ],
      ];
    for (const [title, a, b, claim] of collisions) {
      it(`refuses ${title}, naming both plugins`, () => {
        const assembly = assemble(
          ok(user('second'), defineRegistration(b)),
          ok(user('first'), defineRegistration(a)),
        );
        expect(acceptedNames(assembly)).to.deep.equal(['first']);
        expect(assembly.problems.map((p) => p.message)).to.deep.equal([
          `plugin second@2.3.4 claims ${claim}, already owned by plugin first@2.3.4`,
        ]);
      });
    }
  });

  it('gives the same result for every order of the hook outcomes (sorted)', () => {
    const outcomes = [
      ok(user('c-user'), defineRegistration({ installers: [domain('c')] })),
      ok(bundled('b-core'), defineRegistration({ installers: [domain('b')] })),
      ok(user('a-user'), defineRegistration({ installers: [domain('a'), domain('b')] })),
      failed(user('d-broken'), new Error('boom')),
      ok(bundled('a-core'), defineRegistration({ installers: [domain('x')] })),
    ];
    const permutations = (list: HookOutcome[]): HookOutcome[][] =>
      list.length <= 1
        ? [list]
        : list.flatMap((item, i) =>
            permutations([...list.slice(0, i), ...list.slice(i + 1)]).map((rest) => [
              item,
              ...rest,
            ]),
          );
    const results = permutations(outcomes).map((order) => assemble(...order));
    expect(results).to.have.length(120);
    for (const result of results) expect(result).to.deep.equal(results[0]);
    expect(acceptedNames(results[0]!)).to.deep.equal(['a-core', 'b-core', 'c-user']);
    expect(results[0]!.problems.map((p) => p.plugin)).to.deep.equal([
      'a-user@2.3.4',
      'd-broken@2.3.4',
    ]);
  });
});
