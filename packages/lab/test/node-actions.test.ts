/**
 * A lab's coupled actions (node-actions.ts; docs/plugin-authoring.md "A coupled action on the lab
 * node"): what `fleet lab up --node-actions FILE` accepts, the policy it writes into a new node —
 * read back as its controller reads it, `~` left for the node to expand — and the roles its
 * fleet.yaml names; every bad file refused with the reason before anything is written.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { isFleetError, nodePolicyFile, parseNodePolicy } from '@fleet/core';
import {
  manifestRoles,
  nodeActionsProblems,
  readNodeActionsFile,
  refuseNodeActionsOnStoppedLab,
  type LabNodeActions,
} from '../src/node-actions.js';
import { writeLabNodePolicy } from '../src/policy.js';

const SERVED = ['router', 'files', 'npmrc'];
const CHECK: LabNodeActions = {
  npmrc: {
    actions: {
      'npmrc-check': {
        argv: ['~/bin/npmrc-check', '{file}'],
        timeoutSeconds: 10,
        output: 'discard',
      },
    },
    validate: 'npmrc-check',
  },
};

async function codeAndMessage(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (!isFleetError(error)) throw error;
    const problems = (error.problems ?? []).map((p) => `${p.path ?? ''}: ${p.message}`);
    return [`${error.code}: ${error.message}`, ...problems].join('\n');
  }
  throw new Error('expected a refusal');
}

describe('lab --node-actions: what fleet.yaml names', () => {
  it('gives the domain its roles, in manifest order; other domains nothing', () => {
    const both: LabNodeActions = {
      npmrc: { ...(CHECK['npmrc'] as LabNodeActions[string]), reload: 'npmrc-check' },
    };
    expect(manifestRoles(both, 'npmrc')).to.equal(', reload: npmrc-check, validate: npmrc-check');
    expect(manifestRoles(both, 'router')).to.equal('');
    expect(manifestRoles(undefined, 'npmrc')).to.equal('');
  });
});

describe('lab --node-actions: refused before anything is written', () => {
  const table: [title: string, actions: LabNodeActions, problem: string][] = [
    [
      'a domain the lab does not serve',
      { starship: { actions: {} } },
      'f.yaml: starship: the lab serves no domain starship',
    ],
    [
      'a role naming an id the domain does not define',
      { npmrc: { actions: {}, validate: 'npmrc-check' } },
      'f.yaml: npmrc.validate: names npmrc-check, an action id npmrc.actions does not define',
    ],
  ];
  for (const [title, actions, problem] of table) {
    it(title, () => {
      expect(nodeActionsProblems(actions, SERVED, 'f.yaml')[0]).to.contain(problem);
    });
  }

  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-lab-node-actions-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an argv that is no node policy argv, with the field', async () => {
    const file = join(dir, 'relative.yaml');
    await writeFile(file, 'npmrc:\n  actions:\n    npmrc-check: { argv: [npmrc-check] }\n');
    const said = await codeAndMessage(() => readNodeActionsFile(file, SERVED));
    expect(said).to.match(/^USAGE: --node-actions .* is not a lab's node actions/);
    expect(said).to.contain('npmrc.actions.npmrc-check.argv');
  });

  it('an unknown field, and a file that is not there', async () => {
    const file = join(dir, 'unknown.yaml');
    await writeFile(file, 'npmrc: { actions: {}, reloads: x }\n');
    expect(await codeAndMessage(() => readNodeActionsFile(file, SERVED))).to.contain(
      'npmrc.reloads: unknown field',
    );
    expect(
      await codeAndMessage(() => readNodeActionsFile(join(dir, 'absent.yaml'), SERVED)),
    ).to.match(/^USAGE: --node-actions .*absent\.yaml: ENOENT/);
  });

  it('a stopped lab: its policies are written', async () => {
    expect(
      await codeAndMessage(() => Promise.resolve().then(refuseNodeActionsOnStoppedLab)),
    ).to.contain(
      "USAGE: --node-actions applies to a new lab: a stopped lab's nodes keep the policies they have",
    );
  });

  it('reads YAML and JSON alike', async () => {
    const file = join(dir, 'check.json');
    await writeFile(file, JSON.stringify(CHECK));
    expect(await readNodeActionsFile(file, SERVED)).to.deep.equal(CHECK);
  });
});

describe('lab --node-actions: the policy a new node gets', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'fleet-lab-node-actions-home-'));
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("defines the domain's actions as a node policy does, and nothing else changes", async () => {
    const supervisor = { kind: 'lab' as const, socket: join(home, '..', 'supervisor.sock') };
    const npmrc = { name: 'fleet-plugin-npmrc', root: '/src/npmrc', domains: ['npmrc'] };
    await writeLabNodePolicy(home, supervisor, [], [npmrc], CHECK);
    const file = nodePolicyFile(home);
    const { policy } = parseNodePolicy(await readFile(file, 'utf8'), file);
    expect(policy.domains['npmrc']).to.deep.equal({
      unattended: 'deny',
      actions: CHECK['npmrc']?.actions,
    });
    expect(policy.domains['router']).to.deep.equal({ unattended: 'deny' });
  });
});
