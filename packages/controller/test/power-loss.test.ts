/**
 * Power loss during an install (contract §15; catalogue 24; docs/durability.md). One real install
 * through a real controller is recorded by the crash simulator (support/crash-fs.ts); for a crash
 * after every filesystem call, and every subset of the calls not yet durable (a seeded sample when
 * there are many, writes torn at 512-byte sectors), the state a power loss could leave is written
 * out, a controller starts on it (recovery runs), and:
 * - I1: the file is wholly the old bytes or wholly the new ones (absent or new, for a new file);
 * - I2: when the new bytes are visible over old ones, a backup with the old bytes exists;
 * - I3: recovery left no temp file beside it;
 * - once the receipt reached the client, the new content survives.
 * The last tests drop one fsync in the model — as if the code had not made it — and expect the
 * check to find a state that breaks an invariant (the mutation check of catalogue 24).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { defaultNodePolicy, parseHomePath, type Registry } from '@fleet/core';
import { createController, writeNodePolicy } from '../src/index.js';
import { useDurableFs } from '../src/fs/seam.js';
import { TokenStore } from '../src/tokens/store.js';
import { statePaths, TEMP_PREFIX } from '../src/state-paths.js';
import { systemClock } from '../src/context.js';
import {
  CrashRecorder,
  materialize,
  type RecorderOptions,
  type RecordedOp,
} from './support/crash-fs.js';
import { APP, SECOND, fixtureRegistry } from './support/fixture-registry.js';
import { sha256 } from './support/install.js';
import { call, newId } from './support/node.js';

interface Scenario {
  readonly title: string;
  readonly path: string;
  readonly fileId: string;
  /** The live content before the install (`null`: no file, and no parent directory either). */
  readonly old: string | null;
  readonly content: string;
}

// Contents over several 512-byte sectors, so a torn write shows.
const OLD = `# old\n${'o'.repeat(700)}\n`;
const NEW = `# new\n${'n'.repeat(1500)}\n`;

const SCENARIOS: readonly Scenario[] = [
  {
    title: 'replacing a file (the first backup of its domain)',
    path: APP,
    fileId: 'app.conf',
    old: OLD,
    content: NEW,
  },
  {
    title: 'creating a file in a directory the install makes',
    path: SECOND,
    fileId: 'second.conf',
    old: null,
    content: NEW,
  },
];

// The crash states are throwaway: on a tmpfs, the fsyncs of their restarts cost nothing.
const SCRATCH_ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** A development build: no generation to look the build identity up in. */
const DEV = { sha256: null, commit: null } as const;

const relativeOf = (path: string) => join(...parseHomePath(path));

interface Recording {
  readonly recorder: CrashRecorder;
  readonly receiptAt: number;
}

describe('power loss during an install (simulated crash filesystem)', function () {
  this.timeout(120_000);
  let scratch: string;
  let registry: Registry;

  before(async () => {
    registry = await fixtureRegistry();
    scratch = await realpath(await mkdtemp(join(SCRATCH_ROOT, 'fleet-power-')));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** A home with a token, the env file, and the scenario's old file. */
  async function prepare(scenario: Scenario): Promise<{ home: string; token: string }> {
    const home = await mkdtemp(join(scratch, 'home-'));
    await mkdir(join(home, '.config', 'fleet'), { recursive: true, mode: 0o700 });
    await writeFile(join(home, '.config', 'fleet', 'env'), 'DB_PASSWORD=correct-horse\n', {
      mode: 0o600,
    });
    await writeNodePolicy(home, defaultNodePolicy(['fixture']));
    const { token } = await new TokenStore(statePaths(home), systemClock).issue({
      client: 'power-loss',
      scopes: ['config:install'],
    });
    if (scenario.old !== null) {
      const file = join(home, relativeOf(scenario.path));
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      await writeFile(file, scenario.old, { mode: 0o640 });
    }
    return { home, token };
  }

  /** Starts a controller and installs through it, every durable call recorded. */
  async function record(scenario: Scenario, options: RecorderOptions = {}): Promise<Recording> {
    const { home, token } = await prepare(scenario);
    const recorder = new CrashRecorder(home, options);
    const restore = useDurableFs(recorder);
    let controller;
    try {
      controller = await createController({ home, nodeId: 'node-01', registry });
      const answer = await call(controller.url, '/v1/install', {
        token,
        body: {
          operationId: newId(),
          domain: 'fixture',
          files: [
            {
              fileId: scenario.fileId,
              path: scenario.path,
              expectedSha256: scenario.old === null ? null : sha256(scenario.old),
              content: scenario.content,
            },
          ],
          parameters: {},
        },
      });
      expect(answer.status, answer.text).to.equal(200);
      recorder.mark('receipt');
      recorder.verifyAgainstDisk();
    } finally {
      restore();
      await controller?.close();
    }
    return { recorder, receiptAt: recorder.markIndex('receipt') };
  }

  /** What is wrong with one recovered state (empty: nothing). */
  async function problemsAfterRestart(
    scenario: Scenario,
    home: string,
    receiptReturned: boolean,
  ): Promise<string[]> {
    try {
      const controller = await createController({ home, nodeId: 'node-01', registry, build: DEV });
      await controller.close();
    } catch (error) {
      return [`the controller did not start: ${(error as Error).message}`];
    }
    const problems: string[] = [];
    const file = join(home, relativeOf(scenario.path));
    const live = await readFile(file).catch(() => null);
    const liveSha = live === null ? null : sha256(live);
    const oldSha = scenario.old === null ? null : sha256(scenario.old);
    const newSha = sha256(scenario.content);
    if (liveSha !== oldSha && liveSha !== newSha) {
      problems.push(`I1: the file is neither old nor new (${live?.length ?? 0} bytes)`);
    }
    if (liveSha === newSha && oldSha !== null) {
      const dir = join(home, '.local/state/fleet/backups/fixture');
      const names = await readdir(dir).catch(() => [] as string[]);
      const shas = await Promise.all(
        names.map(async (name) => sha256(await readFile(join(dir, name)))),
      );
      if (!shas.includes(oldSha))
        problems.push('I2: the new content is visible and no backup holds the old');
    }
    if (receiptReturned && liveSha !== newSha) {
      problems.push(
        `receipt: answered 200, yet the file is ${liveSha === null ? 'absent' : 'the old content'}`,
      );
    }
    const litter = (await readdir(dirname(file)).catch(() => [] as string[])).filter((name) =>
      name.startsWith(TEMP_PREFIX),
    );
    if (litter.length > 0)
      problems.push(`I3: temp files left after recovery: ${litter.join(', ')}`);
    return problems;
  }

  /**
   * Every distinct crash state of a recording, restarted and checked; the violations found (up to
   * `limit`), each with the state that shows it.
   */
  async function violations(
    scenario: Scenario,
    recording: Recording,
    limit = Infinity,
  ): Promise<{ found: string[]; states: number; distinct: number }> {
    const found: string[] = [];
    const seen = new Set<string>();
    let states = 0;
    for (const state of recording.recorder.crashStates({
      seed: 24,
      exhaustiveLimit: 64,
      samples: 16,
    })) {
      states += 1;
      const receiptReturned = state.crashAfter > recording.receiptAt;
      const key = `${state.digest}:${String(receiptReturned)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const home = await mkdtemp(join(scratch, 'crash-'));
      try {
        await materialize(state.image, home);
        for (const problem of await problemsAfterRestart(scenario, home, receiptReturned)) {
          found.push(`${problem}\n      ${state.describe()}`);
        }
      } finally {
        await rm(home, { recursive: true, force: true });
      }
      if (found.length >= limit) break;
    }
    return { found, states, distinct: seen.size };
  }

  for (const scenario of SCENARIOS) {
    it(`${scenario.title}: every state a power loss can leave is old or new, backed up, and a receipt's content survives`, async () => {
      const recording = await record(scenario);
      const result = await violations(scenario, recording);
      expect(result.found, result.found.slice(0, 5).join('\n    ')).to.deep.equal([]);
      // Not a vacuous pass: the new content was put in place (a rename over the old file, a link
      // for a new one), and many distinct states were checked.
      const ops = recording.recorder.trace;
      const placed = ops.filter((op) => op.path === scenario.path).map((op) => op.kind);
      expect(placed).to.include(scenario.old === null ? 'link' : 'rename');
      expect(result.distinct).to.be.greaterThan(20);
    });
  }

  const replace = SCENARIOS[0] as Scenario;
  const isTempOf = (path: string) =>
    path.startsWith(`${dirname(replace.path)}/${TEMP_PREFIX}`) && !path.includes('state-');
  const renamedInto = (trace: readonly RecordedOp[]) =>
    trace.some((op) => op.kind === 'rename' && op.path === replace.path);

  it('would catch an install that did not fsync its temp file (mutation check)', async () => {
    const recording = await record(replace, { dropFsync: (path) => isTempOf(path) });
    const result = await violations(replace, recording, 1);
    expect(result.found.join('\n')).to.match(/^I1: the file is neither old nor new/);
  });

  it('would catch an install that did not fsync the directory after its rename (mutation check)', async () => {
    const recording = await record(replace, {
      dropFsync: (path, trace) => path === dirname(replace.path) && renamedInto(trace),
    });
    const result = await violations(replace, recording, 1);
    expect(result.found.join('\n')).to.match(
      /^receipt: answered 200, yet the file is the old content/,
    );
  });
});
