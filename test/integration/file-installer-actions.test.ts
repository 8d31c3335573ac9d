/**
 * Coupled actions in core's public file helpers (docs/plugin-authoring.md §7, issue 40): a domain
 * built on `fileInstaller` or `wholeFileInstaller` runs the roles its install request names —
 * `validate` on the staged new content before it replaces the old, `reload` and `restart` after the
 * writes — through the node's own policy, on a testkit fake host (a real temporary home and the
 * controller's real writer). The action programs are scripted (`host.processes`); the validate
 * script reads the real staged file the writer made.
 */
import { expect } from 'chai';
import { readFile, readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  fileInstaller,
  isFleetError,
  wholeFileInstaller,
  type ActionOutcome,
  type DomainDeclaration,
  type InstallFileRequest,
  type Installer,
  type ProcessRequest,
} from '@fleet/core';
import { createFakeHost, type FakeHost } from '@fleet/testkit';

const CONFIG = '~/.ssh/config';
const MARKERS = { begin: '# fleet:sshcfg:begin', end: '# fleet:sshcfg:end' };

function declaration(kind: 'whole' | 'block'): DomainDeclaration {
  return {
    domain: 'sshcfg',
    description: 'a test domain: one ssh client configuration file',
    files: [
      {
        id: 'config',
        path: CONFIG,
        canonical: 'config',
        kind,
        format: 'text',
        ...(kind === 'block' ? { markers: MARKERS } : {}),
      },
    ],
    hostVariables: [],
    coupling: { kind: 'none' },
  };
}

const VALIDATE = '/usr/local/bin/sshcfg-check';
const RELOAD = '/usr/local/bin/sshcfg-reload';
const RESTART = '/usr/local/bin/sshcfg-restart';

/** What the validate script saw: the staged path, its bytes, and the live file at that moment. */
interface Seen {
  readonly staged: string;
  readonly stagedText: string;
  readonly liveText: string | undefined;
}

async function failure(
  run: () => Promise<unknown>,
): Promise<{ code: string; actions: unknown; toolOutput: string | undefined }> {
  try {
    await run();
  } catch (error) {
    if (!isFleetError(error)) throw error;
    return {
      code: error.code,
      actions: (error as { actions?: unknown }).actions,
      toolOutput: error.toolOutput,
    };
  }
  throw new Error('the install succeeded');
}

describe("core's file installers run the request's role actions", () => {
  let host: FakeHost;
  let seen: Seen[];

  beforeEach(async () => {
    host = await createFakeHost({ nodeId: 'node-01' });
    seen = [];
    await host.setPolicy({
      domains: {
        sshcfg: {
          actions: {
            'ssh-check': { argv: [VALIDATE, '-F', '{file}'] },
            'ssh-check-blind': { argv: [VALIDATE] },
            // The same check, its output returned to the operator (docs/node-policy.md).
            'ssh-check-said': { argv: [VALIDATE, '-F', '{file}'], output: 'return' },
            'ssh-restart-said': { argv: [RESTART], output: 'return' },
            'ssh-reload': { argv: [RELOAD, '~/.ssh'] },
            'ssh-restart': { argv: [RESTART] },
          },
        },
      },
    });
    // The check refuses a configuration holding "Bad": it reads the staged file the writer made.
    host.processes.on(VALIDATE, async (request: ProcessRequest) => {
      const staged = request.args[1] ?? '';
      const stagedText = await readFile(staged, 'utf8');
      seen.push({ staged, stagedText, liveText: await host.readText(CONFIG) });
      if (!stagedText.includes('Bad')) return { exitCode: 0 };
      const why = `${staged} line 1: Bad configuration option: bad\n${staged}: terminating, 1 bad configuration options\n`;
      return { exitCode: 255, stderr: why };
    });
    host.processes.on(RELOAD, { exitCode: 0 });
    host.processes.on(RESTART, { exitCode: 0 });
  });
  afterEach(() => host.dispose());

  async function install(
    installer: Installer,
    kind: 'whole' | 'block',
    content: string,
    actions: Record<string, string>,
  ) {
    const live = await host.writer(declaration(kind)).read(CONFIG);
    const file: InstallFileRequest = {
      fileId: 'config',
      path: CONFIG,
      expectedSha256: live?.sha256 ?? null,
      content,
    };
    return installer.install(
      host.forDomain('sshcfg'),
      {
        operationId: '01JTESTOPERATION0000000000',
        domain: 'sshcfg',
        files: [file],
        parameters: {},
        actions,
      },
      host.writer(declaration(kind)),
    );
  }
  const whole = fileInstaller({ domain: 'sshcfg', files: declaration('whole').files });
  const block = fileInstaller({ domain: 'sshcfg', files: declaration('block').files });
  const ROLES = { validate: 'ssh-check', reload: 'ssh-reload', restart: 'ssh-restart' };
  const backups = () =>
    readdir(host.resolve('~/.local/state/fleet/backups/sshcfg')).catch(() => [] as string[]);
  const kinds = (actions: readonly ActionOutcome[]) => actions.map((a) => `${a.kind} ${a.status}`);

  it('validates the new content staged beside the file before it replaces the old, then reloads and restarts', async () => {
    await host.writeFile(CONFIG, 'Host old\n');
    const result = await install(whole, 'whole', 'Host new\n', ROLES);
    expect(seen).to.have.length(1);
    expect(dirname(seen[0]!.staged)).to.equal(dirname(host.resolve(CONFIG)));
    expect(seen[0]!.stagedText).to.equal('Host new\n');
    expect(seen[0]!.liveText).to.equal('Host old\n');
    expect(await host.readText(CONFIG)).to.equal('Host new\n');
    expect(kinds(result.actions)).to.deep.equal(['validate ok', 'reload ok', 'restart ok']);
    // `~` in the policy's argv is the node's home; `{file}` the staged file.
    expect(host.actionRuns.map((run) => run.argv.join(' '))).to.deep.equal([
      `${VALIDATE} -F ${seen[0]!.staged}`,
      `${RELOAD} ${host.home}/.ssh`,
      RESTART,
    ]);
  });

  it('a refused validation leaves the old file untouched, with no backup or staged file, and runs nothing after', async () => {
    await host.writeFile(CONFIG, 'Host old\n');
    const { code, actions } = await failure(() => install(whole, 'whole', 'Bad line\n', ROLES));
    expect(code).to.equal('ACTION_FAILED');
    expect(kinds(actions as ActionOutcome[])).to.deep.equal(['validate failed']);
    expect(await host.readText(CONFIG)).to.equal('Host old\n');
    expect(await readdir(dirname(host.resolve(CONFIG)))).to.deep.equal(['config']);
    expect(await backups()).to.deep.equal([]);
    expect(host.actionRuns.map((run) => run.id)).to.deep.equal(['ssh-check']);
  });

  it("a refused validation carries the tool's output tail when the node policy returns it, none otherwise", async () => {
    await host.writeFile(CONFIG, 'Host old\n');
    const said = await failure(() =>
      install(whole, 'whole', 'Bad line\n', { validate: 'ssh-check-said' }),
    );
    expect(said.code).to.equal('ACTION_FAILED');
    // The tool named the staged file it checked; the operator reads the path it would replace.
    expect(seen[0]!.staged).to.not.equal(CONFIG);
    expect(said.toolOutput).to.equal(
      `${CONFIG} line 1: Bad configuration option: bad\n${CONFIG}: terminating, 1 bad configuration options`,
    );
    // `output: discard` (the default): what the check printed stays on the node.
    const kept = await failure(() => install(whole, 'whole', 'Bad line\n', ROLES));
    expect([kept.code, kept.toolOutput]).to.deep.equal(['ACTION_FAILED', undefined]);
    expect(await host.readText(CONFIG)).to.equal('Host old\n');
  });

  it('a failed restart carries its output tail too', async () => {
    host.processes.on(
      RESTART,
      { exitCode: 1, stdout: 'unit sshcfg.service:\nfailed to start\n' },
      1,
    );
    await host.writeFile(CONFIG, 'Host old\n');
    const { code, toolOutput } = await failure(() =>
      install(whole, 'whole', 'Host new\n', { restart: 'ssh-restart-said' }),
    );
    expect([code, toolOutput]).to.deep.equal([
      'ACTION_FAILED',
      'unit sshcfg.service:\nfailed to start',
    ]);
    expect(await host.readText(CONFIG)).to.equal('Host old\n');
  });

  it('a refused validation of a new file creates nothing', async () => {
    const { code } = await failure(() => install(whole, 'whole', 'Bad line\n', ROLES));
    expect(code).to.equal('ACTION_FAILED');
    expect(await host.exists(CONFIG)).to.equal(false);
  });

  it('validates a block file as the whole file the splice makes, the user lines included', async () => {
    await host.writeFile(CONFIG, 'Host mine\n  User me\n');
    await install(block, 'block', 'Host fleet\n', { validate: 'ssh-check' });
    expect(seen[0]!.stagedText).to.equal(
      `Host mine\n  User me\n\n${MARKERS.begin}\nHost fleet\n${MARKERS.end}\n`,
    );
    expect(seen[0]!.liveText).to.equal('Host mine\n  User me\n');
  });

  it('a failed restart restores the old file and runs the reload and the restart again on it', async () => {
    host.processes.on(RESTART, { exitCode: 1 }, 1);
    await host.writeFile(CONFIG, 'Host old\n');
    const { code, actions } = await failure(() => install(whole, 'whole', 'Host new\n', ROLES));
    expect(code).to.equal('ACTION_FAILED');
    expect(await host.readText(CONFIG)).to.equal('Host old\n');
    expect(kinds(actions as ActionOutcome[])).to.deep.equal([
      'validate rolled-back',
      'reload rolled-back',
      'restart failed',
      'reload ok',
      'restart ok',
    ]);
    expect(host.actionRuns.map((run) => run.id)).to.deep.equal([
      'ssh-check',
      'ssh-reload',
      'ssh-restart',
      'ssh-reload',
      'ssh-restart',
    ]);
  });

  it('an unchanged file runs no action', async () => {
    await host.writeFile(CONFIG, 'Host same\n');
    const result = await install(whole, 'whole', 'Host same\n', ROLES);
    expect(kinds(result.actions)).to.deep.equal(['reload skipped', 'restart skipped']);
    expect(host.actionRuns).to.deep.equal([]);
  });

  it('refuses a validate action whose argv names no {file} (POLICY_REFUSED): it could not see the new content', async () => {
    await host.writeFile(CONFIG, 'Host old\n');
    const { code } = await failure(() =>
      install(whole, 'whole', 'Host new\n', { validate: 'ssh-check-blind' }),
    );
    expect(code).to.equal('POLICY_REFUSED');
    expect(await host.readText(CONFIG)).to.equal('Host old\n');
    expect(host.actionRuns).to.deep.equal([]);
  });

  it('refuses a role naming an action the node policy lacks (POLICY_REFUSED), writing nothing', async () => {
    const { code } = await failure(() =>
      install(whole, 'whole', 'Host new\n', { reload: 'not-in-policy' }),
    );
    expect(code).to.equal('POLICY_REFUSED');
    expect(await host.exists(CONFIG)).to.equal(false);
  });

  it('wholeFileInstaller runs the same roles', async () => {
    await host.writeFile(CONFIG, 'Host old\n');
    const { code } = await failure(() =>
      install(wholeFileInstaller('sshcfg'), 'whole', 'Bad\n', ROLES),
    );
    expect(code).to.equal('ACTION_FAILED');
    expect(await host.readText(CONFIG)).to.equal('Host old\n');
    const result = await install(wholeFileInstaller('sshcfg'), 'whole', 'Host new\n', ROLES);
    expect(kinds(result.actions)).to.deep.equal(['validate ok', 'reload ok', 'restart ok']);
  });
});
