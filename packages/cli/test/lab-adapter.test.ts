/**
 * The lab bootstrap adapter, pure parts (contract §12–§13): the definition it generates for a
 * generation and reads back, the checks the lab supervisor applies before it runs one, the CLI's
 * own `fleet:register` hook, and the preflight without a supervisor. The adapter driving a real
 * lab is test/e2e/lab-adapter.test.ts.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  CONTROLLER_NODE_OPTIONS,
  argvFlag,
  isFleetError,
  runtimeCommand,
  runtimeLayout,
} from '@fleet/core';
import { LAB_SUPERVISOR_ENV } from '@fleet/lab';
import { FixedClock, RecordedProcessRunner, registryFromHooks } from '@fleet/testkit';
import {
  LAB_CONTROLLER_DEFINITION_PATH,
  createLabAdapter,
  labDefinitionProblem,
  parseLabControllerDefinition,
  withJsonFlag,
} from '@fleet/lab';
import register from '../src/hooks/register-lab.js';

const GEN = 'c3'.repeat(32);
const HOME = '/srv/lab/nodes/node-01/home';
const PORT = 41234;

const command = (overrides: { nodeId?: string; port?: number; home?: string } = {}) =>
  runtimeCommand({
    nodePath: '/usr/bin/node',
    generationDir: runtimeLayout(HOME, 'linux').generation(GEN),
    home: overrides.home ?? HOME,
    nodeId: overrides.nodeId ?? 'node-01',
    port: overrides.port ?? PORT,
  });

function thrown(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (error) {
    expect(isFleetError(error), String(error)).to.equal(true);
    return error as { code: string; message: string };
  }
  throw new Error('expected a throw');
}

describe('lab bootstrap adapter (pure)', () => {
  const adapter = createLabAdapter({ env: {} });

  describe('definition()', () => {
    const base = () => ({ home: HOME, nodeId: 'node-01', command: command() });
    it('is the argv and environment as fleet.lab-controller/v1 JSON at ~/.config/fleet/lab-controller.json', () => {
      const definition = adapter.definition({
        home: HOME,
        nodeId: 'node-01',
        command: command(),
        environment: { NODE_ENV: 'production' },
      });
      expect(definition.path).to.equal('~/.config/fleet/lab-controller.json');
      expect(definition.path).to.equal(LAB_CONTROLLER_DEFINITION_PATH);
      expect(definition.encoding).to.equal('utf8');
      expect(definition.content.endsWith('}\n')).to.equal(true);
      expect(JSON.parse(definition.content)).to.deep.equal({
        schema: 'fleet.lab-controller/v1',
        command: [
          '/usr/bin/node',
          ...CONTROLLER_NODE_OPTIONS,
          `${runtimeLayout(HOME, 'linux').generation(GEN)}/package/bin/run.js`,
          'controller',
          'serve',
          '--home',
          HOME,
          '--node-id',
          'node-01',
          '--port',
          String(PORT),
        ],
        environment: { NODE_ENV: 'production' },
      });
      // pure: the same input, the same bytes
      expect(
        adapter.definition({
          home: HOME,
          nodeId: 'node-01',
          command: command(),
          environment: { NODE_ENV: 'production' },
        }).content,
      ).to.equal(definition.content);
    });

    it('has an empty environment when none is given', () => {
      const definition = adapter.definition({ home: HOME, nodeId: 'node-01', command: command() });
      expect(JSON.parse(definition.content)).to.have.deep.property('environment', {});
    });

    for (const [what, input, pattern] of [
      ['a relative node binary', { command: ['node', 'x.js'] }, /absolute path to the node binary/],
      ['an empty command', { command: [] }, /command/],
      ['a bad node id', { nodeId: '-x' }, /not a node id/],
      ['a relative home', { home: 'srv/home' }, /home must be an absolute path/],
      ['a bad environment name', { environment: { 'A-B': '1' } }, /environment variable name/],
      [
        'the supervisor socket variable',
        { environment: { [LAB_SUPERVISOR_ENV]: '/tmp/x.sock' } },
        /the supervisor's to set/,
      ],
    ] as const) {
      it(`refuses ${what}`, () => {
        const error = thrown(() => adapter.definition({ ...base(), ...input }));
        expect(error.code).to.equal('USAGE');
        expect(error.message).to.match(pattern);
      });
    }
  });

  describe('readDefinition()', () => {
    it('reads back the argv, the generation, the --node-id and the environment', () => {
      const content = adapter.definition({
        home: HOME,
        nodeId: 'node-02',
        command: command({ nodeId: 'node-02' }),
        environment: { FOO: 'bar' },
      }).content;
      expect(adapter.readDefinition(content)).to.deep.equal({
        command: command({ nodeId: 'node-02' }),
        generation: GEN,
        nodeIdFlag: 'node-02',
        environment: { FOO: 'bar' },
      });
    });

    it('says no generation for a command outside generations/ (the dev checkout)', () => {
      const content = adapter.definition({
        home: HOME,
        nodeId: 'node-01',
        command: ['/usr/bin/node', '/src/fleet/packages/cli/bin/run.js', 'controller', 'serve'],
      }).content;
      expect(adapter.readDefinition(content)).to.include({ generation: null, nodeIdFlag: null });
    });

    for (const [what, content, pattern] of [
      ['text that is not JSON', 'command=/usr/bin/node', /lab-controller\.json/],
      [
        'a duplicate key',
        '{"schema":"fleet.lab-controller/v1","command":["/n"],"command":["/m"],"environment":{}}',
        /duplicate/i,
      ],
      [
        'an unknown field',
        '{"schema":"fleet.lab-controller/v1","command":["/n"],"environment":{},"user":"root"}',
        /not a lab controller definition.*user/,
      ],
      [
        'another schema',
        '{"schema":"fleet.lab-controller/v2","command":["/n"],"environment":{}}',
        /not a lab controller definition.*schema/,
      ],
      [
        'a relative node binary',
        '{"schema":"fleet.lab-controller/v1","command":["node"],"environment":{}}',
        /absolute path to the node binary/,
      ],
      [
        'a missing environment',
        '{"schema":"fleet.lab-controller/v1","command":["/n"]}',
        /environment/,
      ],
    ] as const) {
      it(`refuses ${what} (never guessed)`, () => {
        const error = thrown(() => adapter.readDefinition(content));
        expect(error.code).to.equal('ACTION_FAILED');
        expect(error.message).to.match(pattern);
      });
    }
  });

  describe('what the supervisor runs', () => {
    const parsed = (argv: readonly string[], environment: Record<string, string> = {}) =>
      parseLabControllerDefinition(
        adapter.definition({ home: HOME, nodeId: 'node-01', command: argv, environment }).content,
      );

    it('accepts a definition with this node home and the lab port', () => {
      expect(labDefinitionProblem(parsed(command()), { home: HOME, port: PORT })).to.equal(null);
      expect(
        labDefinitionProblem(parsed(command()), { home: `${HOME}/`, port: PORT }),
        'the same directory',
      ).to.equal(null);
    });

    it('refuses another port, a missing port, another home, no node id, not controller serve', () => {
      const at = { home: HOME, port: PORT };
      expect(labDefinitionProblem(parsed(command({ port: PORT + 1 })), at)).to.equal(
        `the command's --port is "${PORT + 1}", but this lab host's port is fixed at ${PORT}`,
      );
      const noPort = command().slice(0, -2);
      expect(labDefinitionProblem(parsed(noPort), at)).to.match(/--port is missing/);
      expect(labDefinitionProblem(parsed(command({ home: '/elsewhere' })), at)).to.match(
        /--home is "\/elsewhere", but this lab node's home is/,
      );
      const noNodeId = command().filter(
        (arg, i, all) => arg !== '--node-id' && all[i - 1] !== '--node-id',
      );
      expect(labDefinitionProblem(parsed(noNodeId), at)).to.match(/--node-id is missing/);
      expect(
        labDefinitionProblem(parsed(['/usr/bin/node', '/x/run.js', 'lab', 'down']), at),
      ).to.match(/does not run `controller serve`/);
    });

    it('appends --json once, and reads --flag VALUE and --flag=VALUE (the last wins)', () => {
      expect(withJsonFlag(['/n', 'a'])).to.deep.equal(['/n', 'a', '--json']);
      expect(withJsonFlag(['/n', '--json', 'a'])).to.deep.equal(['/n', '--json', 'a']);
      expect(argvFlag(['--port', '1', '--port=2'], '--port')).to.equal('2');
      expect(argvFlag(['--port', '1'], '--port')).to.equal('1');
      expect(argvFlag(['--portal', '1'], '--port')).to.equal(null);
    });
  });

  describe('registration and preflight', () => {
    it("the CLI's own fleet:register hook declares the lab adapter, which loads and checks", async () => {
      const registry = await registryFromHooks([
        { plugin: { name: '@fleet/cli', version: '0.1.0', type: 'core' }, hook: register },
      ]);
      expect(registry.problems).to.deep.equal([]);
      expect(
        registry
          .bootstrapAdapters()
          .map((a) => [a.descriptor.supervisor, a.descriptor.platforms, a.plugin.name]),
      ).to.deep.equal([['lab', ['linux', 'darwin'], '@fleet/cli']]);
      const loaded = await registry.bootstrapAdapter('lab');
      expect(loaded).to.include({ supervisor: 'lab', pointer: 'symlink' });
      expect(loaded.platforms).to.deep.equal(['linux', 'darwin']);
    });

    const ctx = {
      home: HOME,
      platform: 'linux' as const,
      nodeId: 'node-01',
      clock: new FixedClock(),
      processes: new RecordedProcessRunner(),
      secrets: () => Promise.resolve(new Map<string, string>()),
    };

    it('reports LAB_SUPERVISOR_UNAVAILABLE without FLEET_LAB_SUPERVISOR', async () => {
      const problems = await createLabAdapter({ env: {} }).preflight(ctx);
      expect(problems.map((p) => p.code)).to.deep.equal(['LAB_SUPERVISOR_UNAVAILABLE']);
      expect(problems[0]?.message).to.contain(`${LAB_SUPERVISOR_ENV} is not set`);
    });

    it('reports LAB_SUPERVISOR_UNAVAILABLE when nothing answers on the socket', async () => {
      const socket = join(tmpdir(), `fleet-no-such-supervisor-${process.pid}.sock`);
      for (const options of [{ socket }, { env: { [LAB_SUPERVISOR_ENV]: socket } }]) {
        const problems = await createLabAdapter(options).preflight(ctx);
        expect(problems.map((p) => p.code)).to.deep.equal(['LAB_SUPERVISOR_UNAVAILABLE']);
        expect(problems[0]?.message).to.contain('no supervisor is listening');
      }
      // and drives nothing else: the adapter runs no processes at all
      expect(ctx.processes.calls).to.deep.equal([]);
    });

    it('refuses to drive a supervisor it cannot find', async () => {
      const error = await createLabAdapter({ env: {} })
        .restart(ctx)
        .then(
          () => undefined,
          (e: unknown) => e as { code: string; message: string },
        );
      expect(error?.code).to.equal('HOST_UNREACHABLE');
      expect(error?.message).to.contain(LAB_SUPERVISOR_ENV);
    });
  });
});
