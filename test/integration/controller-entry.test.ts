/**
 * The controller process loads neither oclif nor the CLI (contract §14, "means";
 * docs/runtime-lifecycle.md "Supervisors"): `bin/run.js controller serve …` hands over to
 * `@fleet/controller`'s own entry. For each supervisor definition fleet writes — a systemd user
 * unit, a Windows scheduled task, the lab's definition file — the command is built as a runtime
 * generation's (core `runtimeCommand`: `<node> <options> <generation>/package/bin/run.js
 * controller serve --home … --node-id …`), written into the definition, read back the way the
 * adapter reads it, and run as it stands: it serves identity with its node id, stops cleanly on
 * SIGTERM, and the import trace of `bench/trace-imports.mjs` shows no oclif, no CLI command and
 * none of core's operator modules (core's main entry, drift, apply, reports) in that process.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import {
  createControllerClient,
  defaultNodePolicy,
  runtimeCommand,
  type DefinitionFacts,
  type SupervisorDefinition,
  type SupervisorDefinitionInput,
} from '@fleet/core';
import { TokenStore, statePaths, systemClock, writeNodePolicy } from '@fleet/controller';
import { ROOT, tempDir } from '../src/fleet.js';

const TRACER = pathToFileURL(join(ROOT, 'bench', 'trace-imports.mjs')).href;
const BUILD_ID = 'a'.repeat(64);

interface Supervisor {
  readonly name: string;
  write(input: SupervisorDefinitionInput): SupervisorDefinition;
  read(content: string): DefinitionFacts;
}

async function supervisors(): Promise<Supervisor[]> {
  const load = (path: string) =>
    import(pathToFileURL(join(ROOT, path)).href) as Promise<Record<string, unknown>>;
  const systemd = await load('plugins/bootstrap-systemd/dist/src/unit.js');
  const windows = await load('plugins/bootstrap-windows/dist/src/task-xml.js');
  const lab = await load('packages/lab/dist/src/definition.js');
  type Write = (input: SupervisorDefinitionInput) => SupervisorDefinition;
  type Read = (content: string) => DefinitionFacts;
  return [
    {
      name: 'systemd user unit',
      write: systemd['systemdUnit'] as Write,
      read: systemd['readUnit'] as Read,
    },
    {
      name: 'Windows scheduled task',
      write: windows['taskXml'] as Write,
      read: windows['readTask'] as Read,
    },
    {
      name: 'lab definition',
      write: lab['labControllerDefinition'] as Write,
      read: lab['readLabControllerDefinition'] as Read,
    },
  ];
}

describe('controller serve: its own entry under every supervisor definition', function () {
  this.timeout(60_000);
  let dir: { path: string; cleanup: () => Promise<void> };
  let generation: string;
  let list: Supervisor[];

  before(async () => {
    dir = await tempDir('fleet-controller-entry-');
    // A generation directory whose package is this checkout's CLI (the runtime layout's shape).
    generation = join(dir.path, 'generations', BUILD_ID);
    await mkdir(generation, { recursive: true });
    await symlink(join(ROOT, 'packages', 'cli'), join(generation, 'package'));
    list = await supervisors();
  });
  after(() => dir?.cleanup());

  const names = ['systemd user unit', 'Windows scheduled task', 'lab definition'];
  names.forEach((name, index) => {
    it(`${name}: the command it holds serves, and loads neither oclif nor the CLI`, async () => {
      const supervisor = list.find((s) => s.name === name) as Supervisor;
      const home = join(dir.path, `home-${index}`);
      await mkdir(home, { recursive: true });
      // The node's own policy (contract §5.1): without one the controller does not start.
      await writeNodePolicy(
        home,
        defaultNodePolicy(['harness-policy', 'router', 'transport-identity']),
      );
      const command = runtimeCommand({
        nodePath: process.execPath,
        generationDir: generation,
        home,
        nodeId: 'node-01',
        port: 0,
      });
      const definition = supervisor.write({ home, nodeId: 'node-01', command });
      const facts = supervisor.read(definition.content);
      expect(facts.command, supervisor.name).to.deep.equal(command);
      expect(facts.nodeIdFlag).to.equal('node-01');

      const trace = join(dir.path, `trace-${index}.jsonl`);
      const [node, ...rest] = facts.command as string[];
      const child = spawn(node as string, ['--import', TRACER, ...rest, '--json'], {
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          HOME: home,
          FLEET_DATA_DIR: join(dir.path, 'oclif-data'),
          FLEET_TRACE_IMPORTS: trace,
          ...facts.environment,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        const line = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout }).once('line', resolve);
          void exited.then((code) =>
            reject(new Error(`exited ${code} before serving:\n${stderr}`)),
          );
        });
        const started = JSON.parse(line) as { url: string; nodeId: string; pid: number };
        expect(started).to.include({ nodeId: 'node-01', pid: child.pid });
        const { token } = await new TokenStore(statePaths(home), systemClock).issue({
          client: 'test',
          scopes: ['config:read'],
        });
        const client = createControllerClient({ host: 'node-01', url: started.url, token });
        const identity = await client.identity();
        client.close();
        expect(identity.nodeId).to.equal('node-01');
        // Every bundled domain is served, as through oclif's plugin loading.
        expect(identity.catalog.domains.map((d) => d.domain)).to.include.members([
          'harness-policy',
          'router',
          'transport-identity',
        ]);
        expect(identity.catalog.bootstrapAdapters.map((a) => a.supervisor)).to.include('lab');
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited, stderr).to.equal(0);

      expect(existsSync(trace), 'the tracer wrote nothing').to.equal(true);
      const lines = readFileSync(trace, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text) as { url?: string; builtins?: string[] });
      // The tracer's last line names no module.
      const urls = lines.map((line) => line.url).filter((url): url is string => url !== undefined);
      expect(
        urls.some((url) => url.includes('/packages/controller/dist/src/serve/main.js')),
      ).to.equal(true);
      expect(urls.filter((url) => url.includes('/@oclif/'))).to.deep.equal([]);
      expect(
        urls.filter((url) => /\/packages\/cli\/dist\/src\/(?:commands|base-command)/.test(url)),
      ).to.deep.equal([]);
      // Nor the operator's half of core: everything on the node comes through `@fleet/core/node`
      // (contract §14: a controller's idle memory holds every module it loaded).
      expect(
        urls.filter((url) =>
          /\/packages\/core\/dist\/src\/(?:index\.js|config\/drift|config\/apply|report\/render-report|authoring\/|repo\/load|client\/operator-log)/.test(
            url,
          ),
        ),
      ).to.deep.equal([]);
      // Nor undici, which node:http imported as an ES module loads on Node.js ≥ 22 (its module
      // namespace reads the lazy WebSocket getters): the server takes node:http through require
      // (packages/controller/src/http/server.ts).
      const builtins = lines.find((line) => line.builtins !== undefined)?.builtins ?? [];
      expect(builtins, 'the tracer listed no Node.js module').to.include('http');
      expect(builtins.filter((name) => name.includes('undici'))).to.deep.equal([]);
    });
  });
});

describe('controller serve: its own entry takes every flag of the command', () => {
  it('accepts each flag `fleet controller serve --help` documents, with the same meaning', async () => {
    const load = (path: string) =>
      import(pathToFileURL(join(ROOT, path)).href) as Promise<Record<string, unknown>>;
    const command = (await load('packages/cli/dist/src/commands/controller/serve.js'))[
      'default'
    ] as { flags: Record<string, { type: string }> };
    const { parseServeFlags } = (await load('packages/controller/dist/src/serve/main.js')) as {
      parseServeFlags: (argv: readonly string[]) => Promise<Record<string, unknown>>;
    };
    const dir = await tempDir('fleet-controller-flags-');
    try {
      const file = join(dir.path, 'file.pem');
      const { writeFile } = await import('node:fs/promises');
      await writeFile(file, 'x');
      const values: Record<string, string> = {
        home: dir.path,
        'node-id': 'node-01',
        bind: '127.0.0.1',
        port: '0',
        'tls-cert': file,
        'tls-key': file,
        'allowed-host': 'node-01.lan:7701, other:1',
        'legacy-token-file': file,
      };
      const argv = Object.entries(command.flags).flatMap(([name, flag]) => {
        if (flag.type === 'boolean') return [`--${name}`];
        expect(values, `a value for --${name}`).to.have.property(name);
        return [`--${name}`, values[name] as string];
      });
      const flags = await parseServeFlags(argv);
      expect(flags).to.include({ home: dir.path, nodeId: 'node-01', port: 0 });
      expect(flags['allowedHosts']).to.deep.equal(['node-01.lan:7701', 'other:1']);
    } finally {
      await dir.cleanup();
    }
  });
});
