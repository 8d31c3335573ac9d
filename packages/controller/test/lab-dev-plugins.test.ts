/**
 * A lab node's dev plugins (contract §13, docs/plugin-authoring.md "The dev loop"): a controller
 * loads the plugins its policy's `lab.devPlugins` names straight from their folders only when it
 * is visibly the lab's node — the lab's layout, its supervisor's socket, started by that
 * supervisor — and never in place of a plugin of its runtime; an enrollment never carries the
 * section. The plugin loaded here is the repository's example third-party plugin, as built.
 */
import { expect } from 'chai';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FleetError, isFleetError } from '@fleet/core';
import { ENROLL_REQUEST_SCHEMA, readEnrollRequest } from '../src/enroll/enroll.js';
import { writeNodePolicy } from '../src/policy/file.js';
import { labDevPlugins, labNodeProblem } from '../src/serve/dev-plugins.js';
import { discoverPlugins, runRegisterHooks } from '../src/serve/plugins.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const CLI = join(ROOT, 'packages', 'cli');
const GITCONFIG = join(ROOT, 'examples', 'fleet-plugin-gitconfig');
const ENV = 'FLEET_LAB_SUPERVISOR';

describe('lab dev plugins: which controller is a lab node', () => {
  const home = '/lab/nodes/node-01/home';
  const socket = '/lab/nodes/node-01/supervisor.sock';
  const lab = { kind: 'lab' as const, socket };
  const table: [
    title: string,
    supervisor: Parameters<typeof labNodeProblem>[0]['supervisor'],
    env: Record<string, string>,
    problem: RegExp | null,
  ][] = [
    ['started by the lab supervisor beside its home', lab, { [ENV]: socket }, null],
    ['no supervisor in its policy', undefined, { [ENV]: socket }, /names no lab supervisor/],
    [
      'a systemd unit',
      { kind: 'systemd-user', unit: 'fleet-controller.service' },
      { [ENV]: socket },
      /names no lab supervisor/,
    ],
    [
      "a socket that is not the lab layout's, next to the home",
      { kind: 'lab', socket: '/elsewhere/supervisor.sock' },
      { [ENV]: '/elsewhere/supervisor.sock' },
      /is not the lab's \/lab\/nodes\/node-01\/supervisor\.sock/,
    ],
    ['not started by a lab supervisor', lab, {}, /FLEET_LAB_SUPERVISOR is unset/],
    [
      "started by another node's supervisor",
      lab,
      { [ENV]: '/lab/nodes/node-02/supervisor.sock' },
      /not started by that lab supervisor/,
    ],
  ];
  for (const [title, supervisor, env, problem] of table) {
    it(`${problem === null ? 'is' : 'is not'} a lab node: ${title}`, () => {
      const found = labNodeProblem(supervisor === undefined ? {} : { supervisor }, home, env);
      if (problem === null) expect(found).to.equal(null);
      else expect(found).to.match(problem);
    });
  }
});

describe("lab dev plugins: read from the node's policy", () => {
  let tmp: string;
  let home: string;
  let socket: string;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleet-dev-plugins-'));
    home = join(tmp, 'nodes', 'node-01', 'home');
    socket = join(tmp, 'nodes', 'node-01', 'supervisor.sock');
    await mkdir(home, { recursive: true });
  });
  afterEach(() => rm(tmp, { recursive: true, force: true }));

  const policy = (lab: boolean) => ({
    version: 1 as const,
    domains: { gitconfig: {} },
    supervisor: { kind: 'lab' as const, socket },
    ...(lab ? { lab: { devPlugins: [{ name: 'fleet-plugin-gitconfig', root: GITCONFIG }] } } : {}),
  });

  it('loads them under the lab supervisor', async () => {
    await writeNodePolicy(home, policy(true));
    expect(await labDevPlugins(home, { [ENV]: socket })).to.deep.equal({
      plugins: [{ name: 'fleet-plugin-gitconfig', root: GITCONFIG }],
    });
  });

  it('refuses them, saying why, in a controller no lab supervisor started', async () => {
    await writeNodePolicy(home, policy(true));
    const found = await labDevPlugins(home, {});
    expect(found.plugins).to.deep.equal([]);
    expect(found.refused).to.equal(
      'warning: the lab dev plugins fleet-plugin-gitconfig are refused: this controller is not a lab node (it was not started by that lab supervisor (FLEET_LAB_SUPERVISOR is unset)); a node loads only the plugins its runtime carries',
    );
  });

  it('has none without a lab section, or without a readable policy', async () => {
    expect(await labDevPlugins(home, { [ENV]: socket })).to.deep.equal({ plugins: [] });
    await writeNodePolicy(home, policy(false));
    expect(await labDevPlugins(home, { [ENV]: socket })).to.deep.equal({ plugins: [] });
  });
});

describe('lab dev plugins: discovered and registered', () => {
  it('registers a dev plugin from its folder, after the runtime plugins', async () => {
    const warnings: string[] = [];
    const plugins = await discoverPlugins({
      cliRoot: CLI,
      warn: (line) => warnings.push(line),
      devPlugins: [{ name: 'fleet-plugin-gitconfig', root: GITCONFIG }],
    });
    expect(warnings).to.deep.equal([]);
    const dev = plugins.filter((plugin) => plugin.ref.type === 'dev');
    expect(dev.map((plugin) => [plugin.ref.name, plugin.root])).to.deep.equal([
      ['fleet-plugin-gitconfig', GITCONFIG],
    ]);
    const outcomes = await runRegisterHooks(dev);
    expect(outcomes.map((outcome) => [outcome.plugin.name, outcome.ok])).to.deep.equal([
      ['fleet-plugin-gitconfig', true],
    ]);
  });

  it("refuses one whose folder is another package, or that has a runtime plugin's name", async () => {
    const warnings: string[] = [];
    const plugins = await discoverPlugins({
      cliRoot: CLI,
      warn: (line) => warnings.push(line),
      devPlugins: [
        { name: 'fleet-plugin-other', root: GITCONFIG },
        { name: '@fleet/plugin-router', root: GITCONFIG },
        { name: 'fleet-plugin-gone', root: join(GITCONFIG, 'no-such-dir') },
      ],
    });
    expect(plugins.filter((plugin) => plugin.ref.type === 'dev')).to.deep.equal([]);
    expect(warnings).to.deep.equal([
      `warning: lab dev plugin fleet-plugin-other is refused: ${join(GITCONFIG, 'package.json')} names fleet-plugin-gitconfig`,
      'warning: lab dev plugin @fleet/plugin-router is refused: a plugin of the runtime has that name',
      `warning: lab dev plugin fleet-plugin-gone is refused: cannot read ${join(GITCONFIG, 'no-such-dir', 'package.json')} (ENOENT)`,
    ]);
  });
});

describe('lab dev plugins: never through an enrollment', () => {
  it('refuses an enrollment request whose policy has a lab section, before reading its plan', () => {
    const request = {
      schema: ENROLL_REQUEST_SCHEMA,
      plan: {},
      policy: [
        'version: 1',
        'supervisor: { kind: lab, socket: /lab/nodes/node-01/supervisor.sock }',
        'lab: { devPlugins: [{ name: fleet-plugin-x, root: /src/x }] }',
      ].join('\n'),
      token: { client: 'operator', scopes: ['config:read'], ttlDays: 30 },
      authorizedKey: null,
    };
    let error: unknown;
    try {
      readEnrollRequest(request);
    } catch (caught) {
      error = caught;
    }
    expect(isFleetError(error), String(error)).to.equal(true);
    expect((error as FleetError).code).to.equal('POLICY_REFUSED');
    expect((error as FleetError).message).to.match(/only fleet lab up writes one/);
  });
});
