/**
 * Where a lab keeps everything and what its nodes are told (contract §13), as tables: host names
 * that never change as a lab grows, the paths of a lab directory and of each node in it, the
 * systemd unit name of a node under `lab up --supervisor systemd-user`, and the node policy `lab
 * up` writes — once, never over a policy the node already has. Paths are computed, not made; the
 * policy is written into temporary homes.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { formatNodePolicy, nodePolicyFile, type NodePolicyInput } from '@fleet/core';
import { hostNames, labLayout, nodeLayout } from '../src/layout.js';
import { labNodePolicy, writeLabNodePolicy, type LabNodeSupervisor } from '../src/policy.js';
import { labUnitName } from '../src/systemd.js';

describe('lab layout: host names (host i keeps its name whatever the size)', () => {
  const cases: { count: number; first: string[]; last: string[] }[] = [
    { count: 0, first: [], last: [] },
    { count: 1, first: ['node-01'], last: ['node-01'] },
    { count: 3, first: ['node-01', 'node-02'], last: ['node-02', 'node-03'] },
    { count: 10, first: ['node-01', 'node-02'], last: ['node-09', 'node-10'] },
    { count: 99, first: ['node-01', 'node-02'], last: ['node-98', 'node-99'] },
    { count: 100, first: ['node-01', 'node-02'], last: ['node-99', 'node-100'] },
    { count: 5000, first: ['node-01', 'node-02'], last: ['node-4999', 'node-5000'] },
  ];
  for (const c of cases) {
    it(`${c.count} host${c.count === 1 ? '' : 's'}: ${c.first.join(', ') || 'none'} … ${c.last.join(', ') || 'none'}`, () => {
      const names = hostNames(c.count);
      expect([names.length, names.slice(0, 2), names.slice(-2)]).to.deep.equal([
        c.count,
        c.first,
        c.last,
      ]);
      expect(new Set(names).size).to.equal(c.count);
    });
  }

  it('growing a lab renames no host', () => {
    expect(hostNames(250).slice(0, 100)).to.deep.equal(hostNames(100));
  });
});

describe('lab layout: the paths of a lab and of each node', () => {
  const cases: { dir: string; host: string; lab: object; node: object }[] = [
    {
      dir: '/srv/lab',
      host: 'node-07',
      lab: {
        dir: '/srv/lab',
        labFile: '/srv/lab/lab.json',
        repo: '/srv/lab/repo',
        credentials: '/srv/lab/credentials.json',
        nodes: '/srv/lab/nodes',
        virtualLog: '/srv/lab/nodes/virtual.log',
      },
      node: {
        host: 'node-07',
        dir: '/srv/lab/nodes/node-07',
        home: '/srv/lab/nodes/node-07/home',
        state: '/srv/lab/nodes/node-07/supervisor.json',
        socket: '/srv/lab/nodes/node-07/supervisor.sock',
        log: '/srv/lab/nodes/node-07/supervisor.log',
      },
    },
    {
      dir: '/home/al/my lab',
      host: 'node-100',
      lab: {
        dir: '/home/al/my lab',
        labFile: '/home/al/my lab/lab.json',
        repo: '/home/al/my lab/repo',
        credentials: '/home/al/my lab/credentials.json',
        nodes: '/home/al/my lab/nodes',
        virtualLog: '/home/al/my lab/nodes/virtual.log',
      },
      node: {
        host: 'node-100',
        dir: '/home/al/my lab/nodes/node-100',
        home: '/home/al/my lab/nodes/node-100/home',
        state: '/home/al/my lab/nodes/node-100/supervisor.json',
        socket: '/home/al/my lab/nodes/node-100/supervisor.sock',
        log: '/home/al/my lab/nodes/node-100/supervisor.log',
      },
    },
  ];
  for (const c of cases) {
    it(`${c.dir}, host ${c.host}`, () => {
      const lab = labLayout(c.dir);
      expect({ lab, node: nodeLayout(lab, c.host) }).to.deep.equal({ lab: c.lab, node: c.node });
    });
  }
});

describe("lab layout: a node's systemd user unit (lab up --supervisor systemd-user)", () => {
  // The tag is the first 8 hex digits of sha256(DIR), as `printf %s DIR | sha256sum` prints it.
  const cases: { dir: string; host: string; unit: string }[] = [
    { dir: '/srv/lab', host: 'node-01', unit: 'fleet-lab-8f527650-node-01.service' },
    { dir: '/srv/lab', host: 'node-02', unit: 'fleet-lab-8f527650-node-02.service' },
    { dir: '/home/al/.fleet-lab', host: 'node-01', unit: 'fleet-lab-c29c34ce-node-01.service' },
    { dir: '/srv/lab2', host: 'node-01', unit: 'fleet-lab-23a92138-node-01.service' },
  ];
  for (const c of cases) {
    it(`${c.dir}, ${c.host}: ${c.unit}`, () => {
      expect(labUnitName(c.dir, c.host)).to.equal(c.unit);
    });
  }
});

describe('lab node policy: what a lab node serves, probes and lets bootstrap', () => {
  const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';
  const common = {
    version: 1 as const,
    domains: {
      files: { patterns: ['~/.config/fleet-demo/**', '~/.gitconfig'] },
      'harness-policy': {},
      router: {},
      'transport-identity': {},
    },
    versions: { tools: ['node', 'git'] },
    symlinkInto: [],
    // Runtimes signed by the lab's release key only (ADR 0019): the lab takes the real path.
    runtime: { trustedKeys: [KEY], allowUnsigned: false },
  };
  const cases: { name: string; supervisor: LabNodeSupervisor; expected: NodePolicyInput }[] = [
    {
      name: 'under its lab supervisor: bootstrap through the lab supervisor only',
      supervisor: { kind: 'lab', socket: '/srv/lab/nodes/node-01/supervisor.sock' },
      expected: {
        ...common,
        bootstrap: { allow: true, supervisors: ['lab'] },
        supervisor: { kind: 'lab', socket: '/srv/lab/nodes/node-01/supervisor.sock' },
      },
    },
    {
      name: 'as a systemd user unit: bootstrap through systemd-user only',
      supervisor: { kind: 'systemd-user', unit: 'fleet-lab-8f527650-node-01.service' },
      expected: {
        ...common,
        bootstrap: { allow: true, supervisors: ['systemd-user'] },
        supervisor: { kind: 'systemd-user', unit: 'fleet-lab-8f527650-node-01.service' },
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(labNodePolicy(c.supervisor, [KEY])).to.deep.equal(c.expected);
    });
  }

  describe('written once (lab up)', () => {
    let root: string;
    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'fleet-lab-policy-'));
    });
    after(async () => {
      await rm(root, { recursive: true, force: true });
    });

    const lab: LabNodeSupervisor = {
      kind: 'lab',
      socket: '/srv/lab/nodes/node-01/supervisor.sock',
    };
    const rows: { name: string; existing: string | null; kept: boolean }[] = [
      { name: 'a home without a policy gets the lab policy, 0600', existing: null, kept: false },
      {
        name: "a home with a policy keeps it, byte for byte (the operator's edits survive lab up)",
        existing: 'version: 1\ndomains:\n  router: {}\n',
        kept: true,
      },
      { name: 'even an empty policy file is kept', existing: '', kept: true },
    ];
    rows.forEach((row, index) => {
      it(row.name, async () => {
        const home = join(root, `home-${index}`);
        const file = nodePolicyFile(home);
        if (row.existing !== null) {
          await mkdir(join(file, '..'), { recursive: true });
          await writeFile(file, row.existing);
        }
        expect(await writeLabNodePolicy(home, lab, [KEY])).to.equal(file);
        const text = await readFile(file, 'utf8');
        if (row.kept) expect(text).to.equal(row.existing);
        else {
          expect(text).to.equal(formatNodePolicy(labNodePolicy(lab, [KEY])));
          expect((await stat(file)).mode & 0o777).to.equal(0o600);
        }
      });
    });
  });
});
