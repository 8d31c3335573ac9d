/**
 * Code-bearing paths (docs/node-policy.md, "Paths that run code"; reliability catalogue): every
 * path a node policy lets a `config:install` write that runs code as the node's user is named,
 * with its reason — the path itself or a pattern that covers it — and a pattern whose first segment
 * under `~/` is a glob is refused unless the policy marks it `broad: true`.
 */
import { expect } from 'chai';
import { FleetError, type Problem } from '../src/errors.js';
import type { DomainDeclaration } from '../src/interfaces/domain.js';
import {
  CODE_BEARING_PATHS,
  codeBearingGrants,
  codeBearingReach,
  describeCodeBearing,
} from '../src/policy/code-bearing.js';
import { parseNodePolicy } from '../src/policy/load.js';
import { isBroadPattern, parseHomePattern, parseListPattern } from '../src/policy/pattern.js';

function problemsOf(text: string): Problem[] {
  try {
    parseNodePolicy(text, 'node-policy.yaml');
  } catch (error) {
    expect(error).to.be.instanceOf(FleetError);
    return [...(error as FleetError).problems];
  }
  return [];
}

describe('code-bearing paths', () => {
  const table: [allowed: string, reaches: string[]][] = [
    ['~/.gitconfig', ['~/.gitconfig']],
    ['~/.zshrc', ['~/.zshrc']],
    ['~/.bashrc', ['~/.bashrc']],
    ['~/.ssh/authorized_keys', ['~/.ssh/**']],
    ['~/.ssh/*', ['~/.ssh/**']],
    ['~/.config/systemd/user/evil.service', ['~/.config/systemd/user/**']],
    ['~/Library/LaunchAgents/dev.x.plist', ['~/Library/LaunchAgents/**']],
    ['~/.config/autostart/x.desktop', ['~/.config/autostart/**']],
    ['~/.config/nvim/init.lua', ['~/.config/nvim/**']],
    ['~/src/app/.git/hooks/pre-commit', ['~/**/.git/**']],
    // A pattern that covers a code-bearing path counts, folded (K is U+212A, ſ is U+017F).
    ['~/.SSH/config', ['~/.ssh/**']],
    ['~/.config/ſystemd/user/x.service', ['~/.config/systemd/user/**']],
    ['~/Library/LaunchAgents/*.plist', ['~/Library/LaunchAgents/**']],
    // Harmless paths reach nothing; a folder pattern covers a repository's hooks in it.
    ['~/.config/fleet-demo/**', ['~/**/.git/**']],
    ['~/.config/fleet-demo/*.yaml', []],
    ['~/.config/router/router.yaml', []],
    ['~/.zshrc.local.md', []],
    ['~/notes/*.md', []],
  ];
  for (const [allowed, reaches] of table) {
    it(`${allowed} ${reaches.length === 0 ? 'runs no code' : `reaches ${reaches.join(', ')}`}`, () => {
      expect(codeBearingReach(allowed).map((entry) => entry.pattern)).to.deep.equal(reaches);
    });
  }

  it('~/.config/*/user/x.service covers systemd user units (and fish, which reads its whole folder)', () => {
    const reached = codeBearingReach('~/.config/*/user/x.service').map((entry) => entry.pattern);
    expect(reached).to.include.members(['~/.config/systemd/user/**', '~/.config/fish/**']);
    expect(reached).to.not.include('~/.gitconfig');
  });

  it('~/.config/** covers systemd user units, git, autostart, fish and editor folders', () => {
    const reached = codeBearingReach('~/.config/**').map((entry) => entry.pattern);
    expect(reached).to.include.members([
      '~/.config/fish/**',
      '~/.config/systemd/user/**',
      '~/.config/environment.d/**',
      '~/.config/git/**',
      '~/.config/autostart/**',
      '~/.config/nvim/**',
    ]);
    expect(reached).to.not.include('~/.zshrc');
  });

  it('gives every entry of the list a reason and a valid pattern', () => {
    for (const entry of CODE_BEARING_PATHS) {
      expect(entry.reason, entry.pattern).to.match(/^[a-zA-Z].{10,}/);
      expect(() => parseListPattern(entry.pattern), entry.pattern).to.not.throw();
    }
  });

  it("names the lab's ~/.gitconfig and the docs example's ~/.zshrc and ~/.config/**, each with its field", () => {
    const { policy } = parseNodePolicy(
      [
        'version: 1',
        'domains:',
        "  files: { patterns: ['~/.config/fleet-demo/**', '~/.gitconfig'] }",
        "  router: { paths: { 'router.yaml': ['~/.zshrc', '~/.config/**'] } }",
        '',
      ].join('\n'),
      'p.yaml',
    );
    const grants = codeBearingGrants(policy);
    expect(grants.map((grant) => [grant.field, grant.allowed])).to.deep.equal([
      ['domains.files.patterns[0]', '~/.config/fleet-demo/**'],
      ['domains.files.patterns[1]', '~/.gitconfig'],
      ['domains.router.paths.router.yaml[0]', '~/.zshrc'],
      ['domains.router.paths.router.yaml[1]', '~/.config/**'],
    ]);
    const lines = describeCodeBearing(grants);
    expect(lines[0]).to.equal(
      "code execution: a config:install of these paths can run code as this node's user",
    );
    expect(lines).to.include(
      '  ~/.gitconfig (domains.files.patterns[1]): git runs the programs its configuration names (core.fsmonitor, core.pager, aliases)',
    );
    expect(lines).to.include(
      '  ~/.config/** reaches ~/.config/systemd/user/** (domains.router.paths.router.yaml[1]): systemd --user starts the units it holds',
    );
  });

  it("names a served domain's declared default path when the plugin declares one", () => {
    const shell: DomainDeclaration = {
      domain: 'shell',
      description: 's',
      files: [{ id: 'zshrc', path: '~/.zshrc', canonical: 'zshrc', kind: 'whole', format: 'text' }],
      hostVariables: [],
      coupling: { kind: 'none' },
    };
    const { policy } = parseNodePolicy('version: 1\ndomains: { shell: {} }\n', 'p.yaml');
    expect(codeBearingGrants(policy, [shell]).map((g) => [g.field, g.allowed])).to.deep.equal([
      ['declared by shell (zshrc)', '~/.zshrc'],
    ]);
    expect(codeBearingGrants(policy, [])).to.deep.equal([]);
  });
});

describe('broad patterns', () => {
  it('knows a pattern whose first segment is a glob', () => {
    expect(isBroadPattern('~/*/**')).to.equal(true);
    expect(isBroadPattern('~/.*/**')).to.equal(true);
    expect(isBroadPattern('~/.*')).to.equal(true);
    expect(isBroadPattern('~/.config/**')).to.equal(false);
    expect(isBroadPattern('~/.ssh/*')).to.equal(false);
    expect(isBroadPattern(parseHomePattern('~/.zshrc'))).to.equal(false);
  });

  for (const pattern of ['~/*/**', '~/.*/**', '~/.*', '~/*rc']) {
    it(`refuses ${pattern} unless the policy says broad: true next to it`, () => {
      const problems = problemsOf(`version: 1\ndomains:\n  files: { patterns: ['${pattern}'] }\n`);
      expect(problems).to.have.length(1);
      expect(problems[0]).to.include({ line: 3, path: 'domains.files.patterns[0]' });
      expect(problems[0]?.message).to.contain('is broad: its first segment under ~/ is a glob');
      expect(problems[0]?.message).to.contain(`{ pattern: '${pattern}', broad: true }`);
      const marked = `version: 1\ndomains:\n  files:\n    patterns:\n      - { pattern: '${pattern}', broad: true }\n`;
      expect(problemsOf(marked)).to.deep.equal([]);
    });
  }

  it('refuses broad: false, a missing pattern, and ~/** even when marked broad', () => {
    const entry = (text: string) =>
      problemsOf(`version: 1\ndomains:\n  files:\n    patterns:\n      - ${text}\n`);
    expect(entry("{ pattern: '~/.*/**', broad: false }")[0]?.path).to.equal(
      'domains.files.patterns[0]',
    );
    expect(entry('{ broad: true }')).to.have.length.above(0);
    const all = entry("{ pattern: '~/**', broad: true }");
    expect(all[0]?.path).to.equal('domains.files.patterns[0].pattern');
    expect(all[0]?.message).to.contain('the first segment cannot be **');
  });

  it('keeps a policy that was valid and not broad loading as it was', () => {
    const text = [
      'version: 1',
      'domains:',
      "  files: { patterns: ['~/.config/fleet-demo/**', '~/.gitconfig', '~/.ssh/config'] }",
      "  router: { paths: { volume: ['~/srv/router/*/volume.yaml'] } }",
      '',
    ].join('\n');
    const { policy } = parseNodePolicy(text, 'p.yaml');
    expect(policy.domains.files?.patterns).to.deep.equal([
      '~/.config/fleet-demo/**',
      '~/.gitconfig',
      '~/.ssh/config',
    ]);
  });
});
