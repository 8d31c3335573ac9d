/**
 * Which processes `fleet lab down` may stop (contract §13), as tables: the processes a lab
 * recorded starting — each node's `supervisor.json`, then the controller pids of `lab.json` — and
 * whether a live process's command line still names this lab's supervisor (`lab supervise --dir
 * DIR`) or the controller of a node's home (`controller serve --home HOME`), so a recycled pid is
 * never signalled. Lab directories are temporary directories with hand-written records; nothing
 * is started and nothing is signalled.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { LabDocument } from '@fleet/core';
import type { LabSupervisorState } from '../src/supervisor-protocol.js';
import { labLayout, nodeLayout } from '../src/layout.js';
import { commandLine, isLabCommand, type LabProcess, type LabRole } from '../src/processes.js';
import { recordedProcesses } from '../src/recorded.js';

describe('lab down: does this command line still belong to the lab?', () => {
  const DIR = '/srv/lab';
  const HOME = '/srv/lab/nodes/node-01/home';
  const RUN = '/src/fleet/packages/cli/bin/run.js';
  const cases: { name: string; args: string[]; role: LabRole; path: string; ours: boolean }[] = [
    {
      name: "this lab's supervisor",
      args: ['/usr/bin/node', RUN, 'lab', 'supervise', '--dir', DIR],
      role: 'supervisor',
      path: DIR,
      ours: true,
    },
    {
      name: "this lab's supervisor, with more flags after --dir",
      args: ['/usr/bin/node', RUN, 'lab', 'supervise', '--dir', DIR, '--virtual', '--hosts', '3'],
      role: 'supervisor',
      path: DIR,
      ours: true,
    },
    {
      name: "another lab's supervisor (a longer DIR)",
      args: ['/usr/bin/node', RUN, 'lab', 'supervise', '--dir', '/srv/lab2'],
      role: 'supervisor',
      path: DIR,
      ours: false,
    },
    {
      name: 'a supervisor given --dir=DIR (never how lab up starts one)',
      args: ['/usr/bin/node', RUN, 'lab', 'supervise', `--dir=${DIR}`],
      role: 'supervisor',
      path: DIR,
      ours: false,
    },
    {
      name: 'lab up for the same DIR is not its supervisor',
      args: ['/usr/bin/node', RUN, 'lab', 'up', '--dir', DIR],
      role: 'supervisor',
      path: DIR,
      ours: false,
    },
    {
      name: "the node's controller, from the dev checkout",
      args: ['/usr/bin/node', RUN, 'controller', 'serve', '--home', HOME],
      role: 'controller',
      path: HOME,
      ours: true,
    },
    {
      name: "the node's controller, from a runtime generation with node options",
      args: [
        '/usr/bin/node',
        '--max-semi-space-size=1',
        `${HOME}/.local/share/fleet/generations/${'ab'.repeat(32)}/package/bin/run.js`,
        'controller',
        'serve',
        '--home',
        HOME,
        '--node-id',
        'node-01',
      ],
      role: 'controller',
      path: HOME,
      ours: true,
    },
    {
      name: "another node's controller",
      args: ['/usr/bin/node', RUN, 'controller', 'serve', '--home', '/srv/lab/nodes/node-02/home'],
      role: 'controller',
      path: HOME,
      ours: false,
    },
    {
      name: 'a controller command line is not a supervisor',
      args: ['/usr/bin/node', RUN, 'controller', 'serve', '--home', HOME],
      role: 'supervisor',
      path: DIR,
      ours: false,
    },
    {
      name: 'the words in another order',
      args: ['/usr/bin/node', RUN, 'serve', 'controller', '--home', HOME],
      role: 'controller',
      path: HOME,
      ours: false,
    },
    {
      name: 'a recycled pid running something else',
      args: ['sleep', '1000'],
      role: 'controller',
      path: HOME,
      ours: false,
    },
    { name: 'no arguments at all', args: [], role: 'supervisor', path: DIR, ours: false },
    {
      name: "as ps prints it (not Linux): this lab's supervisor",
      args: [`/usr/bin/node ${RUN} lab supervise --dir ${DIR}`],
      role: 'supervisor',
      path: DIR,
      ours: true,
    },
    {
      name: "as ps prints it: the node's controller",
      args: [`/usr/bin/node ${RUN} controller serve --home ${HOME}`],
      role: 'controller',
      path: HOME,
      ours: true,
    },
    {
      name: "as ps prints it: another lab's supervisor (a longer DIR)",
      args: [`/usr/bin/node ${RUN} lab supervise --dir /srv/lab2`],
      role: 'supervisor',
      path: DIR,
      ours: false,
    },
    {
      name: "as ps prints it: another node's controller (a longer HOME)",
      args: [`/usr/bin/node ${RUN} controller serve --home ${HOME}-old --node-id node-01`],
      role: 'controller',
      path: HOME,
      ours: false,
    },
    {
      name: 'as ps prints it: a supervisor is not the controller',
      args: [`/usr/bin/node ${RUN} lab supervise --dir ${DIR}`],
      role: 'controller',
      path: HOME,
      ours: false,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.ours ? 'ours' : 'not ours'}`, () => {
      expect(isLabCommand(c.args, c.role, c.path)).to.equal(c.ours);
    });
  }

  const pids: { name: string; pid: number; found: boolean }[] = [
    { name: 'pid 0', pid: 0, found: false },
    { name: 'a negative pid', pid: -1, found: false },
    { name: 'a fractional pid', pid: 1.5, found: false },
    { name: 'NaN', pid: Number.NaN, found: false },
    { name: 'this test process', pid: process.pid, found: true },
  ];
  for (const c of pids) {
    it(`${c.name}: ${c.found ? 'its command line' : 'no process'}`, () => {
      const args = commandLine(c.pid);
      if (c.found) expect(args?.join(' ')).to.contain(process.argv[1] ?? 'mocha');
      else expect(args).to.equal(undefined);
    });
  }
});

describe('lab down: the processes a lab recorded starting', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-lab-recorded-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const supervisor = (
    host: string,
    dir: string,
    fields: Partial<LabSupervisorState>,
  ): LabSupervisorState => ({
    host,
    flags: { nodeId: host, port: 41000 },
    pid: null,
    startedAt: null,
    supervisorPid: 1,
    state: 'running',
    restarts: 0,
    home: nodeLayout(labLayout(dir), host).home,
    virtual: false,
    ...fields,
  });

  interface Case {
    readonly name: string;
    /** `supervisor.json` of each node (text: written as it is). */
    readonly nodes: (dir: string) => Record<string, LabSupervisorState | string>;
    readonly document?: (dir: string) => LabDocument | string;
    /** Other entries of DIR/nodes that are files. */
    readonly files?: readonly string[];
    readonly expected: (dir: string) => LabProcess[];
  }
  const home = (dir: string, host: string) => nodeLayout(labLayout(dir), host).home;
  /** `lab.json` listing `hosts` with the controller pid each had when the lab came up. */
  const documentOf = (dir: string, hosts: [name: string, pid: number][]): LabDocument => ({
    repo: join(dir, 'repo'),
    credentials: join(dir, 'credentials.json'),
    hosts: hosts.map(([name, pid], index) => ({
      name,
      home: home(dir, name),
      controller: `http://127.0.0.1:${41001 + index}`,
      pid,
    })),
  });
  const cases: Case[] = [
    { name: 'a DIR with no lab: nothing', nodes: () => ({}), expected: () => [] },
    {
      name: 'a real node: its supervisor (for DIR) and its controller (for its home)',
      nodes: (dir) => ({ 'node-01': supervisor('node-01', dir, { supervisorPid: 100, pid: 101 }) }),
      expected: (dir) => [
        { pid: 100, role: 'supervisor', host: 'node-01', path: dir },
        { pid: 101, role: 'controller', host: 'node-01', path: home(dir, 'node-01') },
      ],
    },
    {
      name: 'a node whose controller does not run: its supervisor only',
      nodes: (dir) => ({
        'node-01': supervisor('node-01', dir, { supervisorPid: 100, pid: null, state: 'failed' }),
      }),
      expected: (dir) => [{ pid: 100, role: 'supervisor', host: 'node-01', path: dir }],
    },
    {
      name: 'nodes in host-name order',
      nodes: (dir) => ({
        'node-02': supervisor('node-02', dir, { supervisorPid: 200 }),
        'node-01': supervisor('node-01', dir, { supervisorPid: 100 }),
      }),
      expected: (dir) => [
        { pid: 100, role: 'supervisor', host: 'node-01', path: dir },
        { pid: 200, role: 'supervisor', host: 'node-02', path: dir },
      ],
    },
    {
      name: 'a virtual lab: one process, once, serving every node',
      nodes: (dir) => ({
        'node-01': supervisor('node-01', dir, { supervisorPid: 300, pid: 300, virtual: true }),
        'node-02': supervisor('node-02', dir, { supervisorPid: 300, pid: 300, virtual: true }),
      }),
      files: ['virtual.log'],
      document: (dir) =>
        documentOf(dir, [
          ['node-01', 300],
          ['node-02', 300],
        ]),
      expected: (dir) => [{ pid: 300, role: 'supervisor', host: null, path: dir }],
    },
    {
      name: 'a controller restarted since lab up: both its pids (lab.json and supervisor.json)',
      nodes: (dir) => ({ 'node-01': supervisor('node-01', dir, { supervisorPid: 100, pid: 102 }) }),
      document: (dir) => documentOf(dir, [['node-01', 101]]),
      expected: (dir) => [
        { pid: 100, role: 'supervisor', host: 'node-01', path: dir },
        { pid: 102, role: 'controller', host: 'node-01', path: home(dir, 'node-01') },
        { pid: 101, role: 'controller', host: 'node-01', path: home(dir, 'node-01') },
      ],
    },
    {
      name: 'the same controller pid in lab.json and supervisor.json: once',
      nodes: (dir) => ({ 'node-01': supervisor('node-01', dir, { supervisorPid: 100, pid: 101 }) }),
      document: (dir) => documentOf(dir, [['node-01', 101]]),
      expected: (dir) => [
        { pid: 100, role: 'supervisor', host: 'node-01', path: dir },
        { pid: 101, role: 'controller', host: 'node-01', path: home(dir, 'node-01') },
      ],
    },
    {
      name: 'a host in lab.json without a supervisor.json: its controller from lab.json',
      nodes: (dir) => ({ 'node-01': supervisor('node-01', dir, { supervisorPid: 100 }) }),
      document: (dir) => documentOf(dir, [['node-02', 201]]),
      expected: (dir) => [
        { pid: 100, role: 'supervisor', host: 'node-01', path: dir },
        { pid: 201, role: 'controller', host: 'node-02', path: home(dir, 'node-02') },
      ],
    },
    {
      name: 'a supervisor.json that is not JSON, or not a supervisor record, is no record',
      nodes: (dir) => ({
        'node-01': '{"host": "node-01", ',
        'node-02': JSON.stringify({ ...supervisor('node-02', dir, {}), supervisorPid: 0 }),
        'node-03': '{"supervisorPid": 5, "supervisorPid": 6}',
        'node-04': supervisor('node-04', dir, { supervisorPid: 400 }),
      }),
      expected: (dir) => [{ pid: 400, role: 'supervisor', host: 'node-04', path: dir }],
    },
    {
      name: 'a lab.json that is not a lab document adds nothing',
      nodes: (dir) => ({ 'node-01': supervisor('node-01', dir, { supervisorPid: 100 }) }),
      document: () => '{"repo": "/x", "hosts": "all"}',
      expected: (dir) => [{ pid: 100, role: 'supervisor', host: 'node-01', path: dir }],
    },
  ];

  cases.forEach((c, index) => {
    it(c.name, async () => {
      const dir = join(root, `lab-${index}`);
      const lab = labLayout(dir);
      await mkdir(lab.nodes, { recursive: true });
      for (const [host, state] of Object.entries(c.nodes(dir))) {
        const node = nodeLayout(lab, host);
        await mkdir(node.dir, { recursive: true });
        await writeFile(node.state, typeof state === 'string' ? state : JSON.stringify(state));
      }
      for (const file of c.files ?? []) await writeFile(join(lab.nodes, file), '');
      if (c.document) {
        const document = c.document(dir);
        await writeFile(
          lab.labFile,
          typeof document === 'string' ? document : JSON.stringify(document),
        );
      }
      expect(await recordedProcesses(lab)).to.deep.equal(c.expected(dir));
    });
  });

  it('a DIR that does not exist: nothing', async () => {
    expect(await recordedProcesses(labLayout(join(root, 'missing')))).to.deep.equal([]);
  });
});
