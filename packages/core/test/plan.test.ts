/**
 * What install does with each state of contract §8.2 (pure): `plannedInstall` over a plan's items.
 * A hand change is refused without --force — exit 7, the code of the worst state — and the refusal
 * names the ways out: adopt, adopt --promote, --force (a deleted file: --force recreates it).
 */
import { expect } from 'chai';
import { buildDomainPlan, planRefusal, plannedInstall } from '../src/config/plan.js';
import type { FileAssessment } from '../src/config/file-items.js';
import type { FileTarget } from '../src/config/file-target.js';
import { isFleetError, type FleetErrorLike } from '../src/errors.js';
import type { DriftState } from '../src/interfaces/drift.js';

const file = (id: string, state: DriftState, liveSha256: string | null = 'a'.repeat(64)) => {
  const target: FileTarget = {
    domain: 'demo',
    file: { id, path: `~/${id}`, canonical: id, kind: 'whole', format: 'text' },
    path: `~/${id}`,
    canonical: `domains/demo/${id}`,
    desired: { ok: true, content: `${id} desired\n` },
  };
  const assessment: FileAssessment = {
    item: {
      layer: 'file',
      domain: 'demo',
      path: `~/${id}`,
      state,
      ...(state === 'diverged' ? { localLines: 2 } : {}),
    },
    liveSha256,
  };
  return { target, assessment };
};

const plan = (...files: ReturnType<typeof file>[]) =>
  buildDomainPlan({
    host: 'node-01',
    domain: 'demo',
    repoCommit: 'c1',
    actions: [],
    assessed: files,
  });

function refusal(run: () => unknown): FleetErrorLike {
  try {
    run();
  } catch (error) {
    if (isFleetError(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('install refuses hand changes without --force, naming the ways out', () => {
  it('writes stale and missing files without --force, but not a modified one among them (the field report wrote it)', () => {
    const planned = plannedInstall(plan(file('a', 'stale'), file('b', 'missing', null)));
    expect(planned.files.map((f) => [f.path, f.expectedSha256])).to.deep.equal([
      ['~/a', 'a'.repeat(64)],
      ['~/b', null],
    ]);
    const error = refusal(() =>
      plannedInstall(plan(file('a', 'stale'), file('b', 'missing', null), file('c', 'modified'))),
    );
    expect([error.code, error.exitCode]).to.deep.equal(['MODIFIED', 7]);
  });

  const table: { states: DriftState[]; code: string }[] = [
    { states: ['modified'], code: 'MODIFIED' },
    { states: ['deleted'], code: 'DELETED' },
    { states: ['deleted', 'modified', 'stale'], code: 'MODIFIED' },
    { states: ['deleted', 'stale'], code: 'DELETED' },
  ];
  for (const { states, code } of table) {
    it(`${states.join(' + ')}: refused with ${code} (exit 7), nothing sent`, () => {
      const error = refusal(() =>
        plannedInstall(
          plan(
            ...states.map((state, i) =>
              file(`f${i}`, state, state === 'deleted' ? null : 'a'.repeat(64)),
            ),
          ),
        ),
      );
      expect([error.code, error.exitCode]).to.deep.equal([code, 7]);
    });
  }

  it('the worst refused state gives the code: diverged over modified over deleted', () => {
    const error = refusal(() =>
      plannedInstall(
        plan(file('a', 'modified'), file('b', 'diverged'), file('c', 'deleted', null)),
      ),
    );
    expect(error.code).to.equal('DIVERGED');
    expect(error.message)
      .to.contain('~/a is modified by hand')
      .and.contain('~/c was installed by fleet');
  });

  it('names adopt, adopt --promote and --force for a hand change, --force alone for a deleted file', () => {
    const error = refusal(() =>
      plannedInstall(plan(file('CLAUDE.md', 'modified'), file('AGENTS.md', 'deleted', null))),
    );
    expect(error.message).to.contain('~/CLAUDE.md is modified by hand');
    expect(error.message).to.contain('~/AGENTS.md was installed by fleet and removed since');
    expect(error.suggestions).to.deep.equal([
      'fleet config adopt node-01 ~/CLAUDE.md   (keep it in mirror/ for review)',
      'fleet config adopt node-01 ~/CLAUDE.md --promote   (make it the canonical: the host is then current)',
      'fleet config install node-01 demo --file ~/CLAUDE.md --confirm --force   (overwrite it)',
      'fleet config install node-01 demo --file ~/AGENTS.md --confirm --force   (recreate it)',
    ]);
  });

  it('ucf --force-confmiss / dpkg --force-confmiss: only --force recreates a deleted file and overwrites a hand change', () => {
    const files = [file('a', 'deleted', null), file('b', 'modified'), file('c', 'diverged')];
    expect(refusal(() => plannedInstall(plan(file('a', 'deleted', null)))).code).to.equal(
      'DELETED',
    );
    const planned = plannedInstall(plan(...files), { force: true });
    expect(planned.files.map((f) => [f.path, f.expectedSha256])).to.deep.equal([
      ['~/a', null],
      ['~/b', 'a'.repeat(64)],
      ['~/c', 'a'.repeat(64)],
    ]);
  });

  it('--file chooses: a modified file left out is not refused, a modified file chosen is', () => {
    const both = plan(file('a', 'modified'), file('b', 'stale'));
    expect(plannedInstall(both, { files: ['~/b'] }).files.map((f) => f.path)).to.deep.equal([
      '~/b',
    ]);
    expect(refusal(() => plannedInstall(both, { files: ['~/a'] })).code).to.equal('MODIFIED');
  });
});

describe("a derived layer's hand change in the plan (the router's volume, contract §10.1)", () => {
  const VOLUME = '~/.local/share/router/volume/router.yaml';
  const withVolume = (state: DriftState) =>
    buildDomainPlan({
      host: 'node-01',
      domain: 'demo',
      repoCommit: 'c1',
      actions: [],
      assessed: [file('router.yaml', 'current')],
      derived: [{ layer: 'derived', domain: 'demo', path: VOLUME, state, detail: 'hand fix' }],
    });

  it('ucf/dpkg useredited, for a derived file: a volume fleet never wrote is refused without --force (MODIFIED)', () => {
    const plan = withVolume('modified');
    expect(plan.changes).to.equal(true);
    const error = refusal(() => plannedInstall(plan));
    expect([error.code, error.exitCode]).to.deep.equal(['MODIFIED', 7]);
    expect(error.message).to.contain(`${VOLUME} (derived) hand fix`);
    expect(plannedInstall(plan, { force: true }).files.map((f) => f.path)).to.deep.equal([
      '~/router.yaml',
    ]);
  });

  it('a stale volume (a version fleet wrote) is an install to do, not "nothing to install"', () => {
    const plan = withVolume('stale');
    expect(plan.changes).to.equal(true);
    expect(plannedInstall(plan).files).to.have.length(1);
    expect(withVolume('current').changes).to.equal(false);
  });
});

describe("a files entry's mode and action in the plan (contract §10.4)", () => {
  const entry = (id: string, state: DriftState) => {
    const base = file(id, state);
    return {
      ...base,
      target: {
        ...base.target,
        file: { ...base.target.file, mode: '0600', action: 'zsh-reload' },
      },
    };
  };

  it('lists the action of each file an install would change, and none for a current one', () => {
    const planned = plan(entry('a', 'stale'), entry('b', 'current'));
    expect(planned.actions).to.deep.equal([
      { kind: 'zsh-reload', description: 'node policy action zsh-reload, after ~/a is written' },
    ]);
  });

  it('sends each file with its mode and its action id (never an argv)', () => {
    const planned = plannedInstall(plan(entry('a', 'stale')));
    expect(planned.files[0]).to.include({ path: '~/a', mode: '0600', action: 'zsh-reload' });
  });
});

describe('a file no install can write: the top-level code says what happened (contract §7)', () => {
  /** A file the assessment could not make installable, with the code it carries. */
  const blocked = (id: string, state: 'error' | 'unsupported', code?: string) => {
    const { target, assessment } = file(id, state);
    return {
      target,
      assessment: {
        ...assessment,
        item: { ...assessment.item, detail: `${code ?? 'something'}: why` },
        ...(code === undefined ? {} : { code }),
      },
    };
  };
  const table: {
    name: string;
    state: 'error' | 'unsupported';
    code?: string;
    expected: [string, number];
  }[] = [
    {
      name: 'a node that lacks the plugin or does not list the domain',
      state: 'error',
      code: 'DOMAIN_NOT_SERVED',
      expected: ['DOMAIN_NOT_SERVED', 7],
    },
    {
      name: 'a path its node policy refuses',
      state: 'error',
      code: 'POLICY_REFUSED',
      expected: ['POLICY_REFUSED', 7],
    },
    {
      name: "a render error or the domain's check",
      state: 'error',
      code: 'RENDER_FAILED',
      expected: ['RENDER_FAILED', 2],
    },
    {
      name: 'a symbolic link',
      state: 'unsupported',
      code: 'SYMLINK_REFUSED',
      expected: ['SYMLINK_REFUSED', 7],
    },
    {
      name: 'a hard-linked file',
      state: 'unsupported',
      code: 'HARDLINK_REFUSED',
      expected: ['HARDLINK_REFUSED', 7],
    },
    {
      name: 'a binary live file',
      state: 'unsupported',
      code: 'FORMAT_UNSUPPORTED',
      expected: ['FORMAT_UNSUPPORTED', 7],
    },
    {
      name: 'nothing more precise known',
      state: 'unsupported',
      expected: ['FORMAT_UNSUPPORTED', 7],
    },
    {
      name: 'a code this core does not know',
      state: 'error',
      code: 'SOMETHING_NEW',
      expected: ['FORMAT_UNSUPPORTED', 7],
    },
  ];
  for (const c of table) {
    it(`${c.name}: ${c.expected[0]}, exit ${c.expected[1]}, nothing sent`, () => {
      const error = refusal(() =>
        plannedInstall(plan(file('a', 'stale'), blocked('b', c.state, c.code)), { force: true }),
      );
      expect([error.code, error.exitCode]).to.deep.equal(c.expected);
      expect(error.message).to.contain('~/b');
    });
  }

  it('config plan: a node that cannot serve the domain is its refusal (exit 7), not a change', () => {
    expect(planRefusal([plan(file('a', 'stale'))])).to.equal(undefined);
    expect(planRefusal([plan(blocked('a', 'unsupported', 'SYMLINK_REFUSED'))])).to.equal(undefined);
    expect(planRefusal([plan(blocked('a', 'error', 'RENDER_FAILED'))])).to.equal(undefined);
    const refused = planRefusal([
      plan(file('a', 'stale')),
      plan(blocked('a', 'error', 'DOMAIN_NOT_SERVED')),
    ]);
    expect([refused?.code, refused?.exitCode]).to.deep.equal(['DOMAIN_NOT_SERVED', 7]);
    expect(refused?.message).to.equal('node-01 cannot install demo: DOMAIN_NOT_SERVED: why');
  });
});
