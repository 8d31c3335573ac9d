/**
 * The fixture domains every controller test runs against, registered the way a plugin registers
 * (core `defineRegistration`, through testkit's `registryFromHooks`):
 * - `fixture`: two whole files, no coupling, installed by core's real `wholeFileInstaller`;
 * - `coupled`: one file and a coupled action that runs a real process, which fails when the
 *   request's `action` parameter says `fail` (the controller must then restore the file) — or,
 *   when the request names a `restart` action id, the node policy's action of that id;
 * - probers: one per scope rule, and one declared without an implementation.
 */
import {
  FleetError,
  defineRegistration,
  resolveSecrets,
  wholeFileInstaller,
  type Installer,
  type Prober,
  type ReplaceResult,
} from '@fleet/core';
import { registryFromHooks } from '@fleet/testkit';

export const APP = '~/.config/fixture/app.conf';
export const SECOND = '~/.config/fixture/second.conf';
export const SVC = '~/.config/coupled/svc.yaml';

const coupledInstaller: Installer = {
  domain: 'coupled',
  view: (_file, rendered) => rendered,
  managed: (_file, live) => live,
  async install(ctx, request, writer) {
    const secrets = await ctx.secrets();
    const results: ReplaceResult[] = [];
    for (const file of request.files) {
      results.push(
        await writer.replace({
          path: file.path,
          expectedSha256: file.expectedSha256,
          content: new TextEncoder().encode(resolveSecrets(file.content, secrets, file.path)),
        }),
      );
    }
    const id = request.actions?.['restart'];
    if (id !== undefined) {
      if (!ctx.actions) throw new FleetError('POLICY_REFUSED', 'no node policy actions here');
      const ran = await ctx.actions.run(id);
      const said = ran.output === undefined ? '' : `: ${ran.output}`;
      if (ran.exitCode !== 0) {
        throw new FleetError('ACTION_FAILED', `action ${id} exited ${ran.exitCode}${said}`, {
          actions: [{ kind: 'restart', status: 'failed', detail: `exited ${ran.exitCode}${said}` }],
        });
      }
      return {
        files: results,
        actions: [{ kind: 'restart', status: 'ok', detail: `action ${id} exited 0${said}` }],
        verified: true,
      };
    }
    const exit = request.parameters['action'] === 'fail' ? 3 : 0;
    const run = await ctx.processes.run({
      command: process.execPath,
      args: ['-e', `process.exit(${exit})`],
    });
    if (run.exitCode !== 0) {
      throw new FleetError('ACTION_FAILED', `restart exited ${run.exitCode}`);
    }
    return {
      files: results,
      actions: [{ kind: 'restart', status: 'ok', detail: 'restarted' }],
      verified: true,
    };
  },
};

const factsProber = (facts: (secrets: Map<string, string>) => unknown): Prober => ({
  id: 'unused',
  layer: 'file',
  async collect(ctx) {
    return facts(new Map(await ctx.secrets())) as never;
  },
  evaluate: () => [],
});

export const fixtureRegistration = defineRegistration({
  installers: [
    {
      domain: 'fixture',
      description: 'two whole files, no coupling',
      files: [
        { id: 'app.conf', path: APP, canonical: 'app.conf', kind: 'whole', format: 'text' },
        {
          id: 'second.conf',
          path: SECOND,
          canonical: 'second.conf',
          kind: 'whole',
          format: 'text',
        },
      ],
      hostVariables: [],
      coupling: { kind: 'none' },
      backups: 3,
      load: () => Promise.resolve(wholeFileInstaller('fixture')),
    },
    {
      domain: 'coupled',
      description: 'one file and a restart',
      files: [{ id: 'svc.yaml', path: SVC, canonical: 'svc.yaml', kind: 'whole', format: 'yaml' }],
      hostVariables: [],
      coupling: {
        kind: 'process',
        actions: [{ kind: 'restart', description: 'restart the service' }],
      },
      load: () => Promise.resolve(coupledInstaller),
    },
    {
      domain: 'declared',
      description: 'declared, without an installer',
      files: [
        {
          id: 'x.md',
          path: '~/.config/declared/x.md',
          canonical: 'x.md',
          kind: 'whole',
          format: 'markdown',
        },
      ],
      hostVariables: [],
      coupling: { kind: 'none' },
    },
  ],
  probers: [
    {
      id: 'fixture.facts',
      layer: 'file',
      domain: 'fixture',
      description: 'echoes the canary (to prove facts are redacted)',
      load: () =>
        Promise.resolve(
          factsProber((s) => ({
            canary: s.get('CANARY') ?? null,
            nested: [{ v: s.get('CANARY') ?? null }],
          })),
        ),
    },
    {
      id: 'fixture.digest',
      layer: 'file',
      domain: 'fixture',
      description:
        "the sha256 of app.conf (a hash-valued fact), read through the controller's reads",
      load: () =>
        Promise.resolve({
          id: 'fixture.digest',
          layer: 'file',
          async collect(ctx) {
            const live = await ctx.files?.read(APP);
            return { path: APP, sha256: live?.sha256 ?? null, note: `digest ${live?.sha256}` };
          },
          evaluate: () => [],
        } satisfies Prober),
    },
    { id: 'fixture.absent', layer: 'file', domain: 'fixture', description: 'declared only' },
    {
      id: 'supervisor.unit',
      layer: 'runtime',
      description: 'a supervisor prober (readable with any read scope)',
      load: () => Promise.resolve(factsProber(() => ({ running: true }))),
    },
    {
      id: 'tools.versions',
      layer: 'version',
      description: 'tool versions',
      load: () => Promise.resolve(factsProber(() => ({ node: process.version }))),
    },
  ],
});

export function fixtureRegistry() {
  return registryFromHooks([
    {
      plugin: { name: '@fleet/plugin-fixture', version: '1.2.3', type: 'core' },
      hook: () => fixtureRegistration,
    },
  ]);
}
