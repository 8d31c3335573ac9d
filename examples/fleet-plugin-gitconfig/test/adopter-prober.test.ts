import { expect } from 'chai';
import { adoptCandidate, isFleetError, type Capture } from '@fleet/core';
import { createFakeHost, type FakeHost } from '@fleet/testkit';
import {
  IDENTITY_PROBER,
  createGitconfigAdopter,
  createIdentityProber,
  gitconfigDomain,
} from '../src/index.js';

const FILE = gitconfigDomain.files[0];
const VARIABLES = { git_name: 'Ops Team', git_email: 'ops@example.org' };

function capture(content: string): Capture {
  return {
    host: 'node-01',
    path: '~/.gitconfig',
    sha256: '0'.repeat(64),
    content,
    controller: 'test',
  };
}

describe('gitconfig plugin: adopter', () => {
  const adopter = createGitconfigAdopter();
  const live =
    '[core]\n\teditor = emacs\n\n# fleet:gitconfig:begin\n[user]\n\tname = Ops Team\n\temail = ops@example.org\n\tsigningkey = ABCDEF\n# fleet:gitconfig:end\n';

  it("adopts the block's body only, host variables reverse-substituted, into mirror/", () => {
    const candidate = adoptCandidate({
      host: 'node-01',
      declaration: gitconfigDomain,
      file: FILE,
      capture: capture(live),
      variables: VARIABLES,
      adopter,
    });
    expect(candidate.mirrorPath).to.equal('mirror/node-01/gitconfig/gitconfig');
    expect(candidate.content).to.equal(
      '[user]\n\tname = {{ host.git_name }}\n\temail = {{ host.git_email }}\n\tsigningkey = ABCDEF\n',
    );
    expect(candidate.content).to.not.contain('emacs'); // the user's text is theirs
  });

  it('refuses a file without a fleet block', () => {
    try {
      adopter.candidate(FILE, capture('[core]\n\teditor = emacs\n'));
      expect.fail('no refusal');
    } catch (error) {
      expect(isFleetError(error) && error.code).to.equal('FILE_NOT_FOUND');
    }
  });
});

describe('gitconfig plugin: identity prober', () => {
  const prober = createIdentityProber();
  const desired = {
    host: 'node-01',
    variables: VARIABLES,
    canonicalVersion: '0.1.0',
    parameters: {},
  };
  let host: FakeHost;
  beforeEach(async () => {
    host = await createFakeHost();
  });
  afterEach(() => host.dispose());

  it("asks git for the effective identity, and is current when it matches the host's variables", async () => {
    host.processes
      .on('git config --global --get user.email', { stdout: 'ops@example.org\n' })
      .on('git config --global --get user.name', { stdout: 'Ops Team\n' });
    const facts = await prober.collect(host, {});
    expect(facts).to.deep.equal({ git: 'present', email: 'ops@example.org', name: 'Ops Team' });
    expect(host.processes.commandLines()).to.deep.equal([
      'git config --global --get user.email',
      'git config --global --get user.name',
    ]);
    expect(prober.evaluate(facts, desired).map((item) => item.state)).to.deep.equal(['current']);
    expect(prober.id).to.equal(IDENTITY_PROBER);
  });

  it('reports diverged when a later setting overrides the fleet block', async () => {
    host.processes
      .on('git config --global --get user.email', { stdout: 'me@home.example\n' })
      .on('git config --global --get user.name', { stdout: 'Ops Team\n' });
    const [item] = prober.evaluate(await prober.collect(host, {}), desired);
    expect(item?.state).to.equal('diverged');
    expect(item?.detail).to.contain(
      'git resolves user.email to "me@home.example", not git_email "ops@example.org"',
    );
  });

  it('reports missing when git resolves no identity (the block is not installed yet)', async () => {
    host.processes.on('git config --global --get', { exitCode: 1 });
    const [item] = prober.evaluate(await prober.collect(host, {}), desired);
    expect(item).to.deep.include({
      state: 'missing',
      detail: 'git resolves no user.email and user.name: the fleet block is not installed',
    });
  });

  it('reports unsupported when git cannot be run', async () => {
    // Nothing scripted: the recorded runner answers 127, as a missing command would.
    const [item] = prober.evaluate(await prober.collect(host, {}), desired);
    expect(item?.state).to.equal('unsupported');
  });
});
