/**
 * Code-bearing node paths (docs/node-policy.md, "Paths that run code"): files and folders whose
 * content some program on the node runs, or obeys to run a program, as the node's user — a shell
 * reads its start-up files, `git` runs what its configuration names (`core.fsmonitor`), sshd obeys
 * `authorized_keys` options, `systemd --user` and launchd start what their folders hold. A
 * `config:install` of such a path is code execution as that user.
 *
 * Managing them is legitimate (dotfiles are what the files domain is for); the policy allowing one
 * is not refused for it, but every place that shows an operator what a policy allows names each
 * such path and why, at the moment the policy allows it (`fleet validate --node-policy`, `fleet
 * node-policy show`, `fleet host add`'s plan). Pure: no filesystem.
 */
import type { DomainDeclaration } from '../interfaces/domain.js';
import type { NodePolicy } from './schema.js';
import {
  parseHomePattern,
  parseListPattern,
  patternsOverlap,
  policyPatternText,
  type HomePattern,
} from './pattern.js';

export interface CodeBearingPath {
  /** A pattern of core's list (`~/.ssh/**`); a policy's pattern that overlaps it reaches it. */
  readonly pattern: string;
  /** Why a write there is code execution, in one clause. */
  readonly reason: string;
}

const SHELL = 'a shell runs it at start-up';
const GIT = 'git runs the programs its configuration names (core.fsmonitor, core.pager, aliases)';
const EDITOR = 'the editor runs the code it holds at start';

/** The list, each entry with its reason. Order: shown in this order. */
export const CODE_BEARING_PATHS: readonly CodeBearingPath[] = [
  ...[
    '~/.profile',
    '~/.bashrc',
    '~/.bash_profile',
    '~/.bash_login',
    '~/.bash_logout',
    '~/.zshenv',
    '~/.zshrc',
    '~/.zprofile',
    '~/.zlogin',
    '~/.zlogout',
    '~/.cshrc',
    '~/.tcshrc',
    '~/.kshrc',
    '~/.config/fish/**',
    '~/.config/powershell/**',
    '~/Documents/PowerShell/**',
    '~/Documents/WindowsPowerShell/**',
    '~/.xprofile',
    '~/.xinitrc',
    '~/.xsession',
    '~/.xsessionrc',
  ].map((pattern) => ({ pattern, reason: SHELL })),
  {
    pattern: '~/.ssh/**',
    reason:
      'sshd obeys authorized_keys (command=, environment=) and ssh runs config (ProxyCommand, LocalCommand) and rc',
  },
  {
    pattern: '~/.config/systemd/user/**',
    reason: 'systemd --user starts the units it holds',
  },
  {
    pattern: '~/.local/share/systemd/user/**',
    reason: 'systemd --user starts the units it holds',
  },
  {
    pattern: '~/.config/environment.d/**',
    reason: 'systemd --user gives every service its variables (LD_PRELOAD, PATH)',
  },
  { pattern: '~/Library/LaunchAgents/**', reason: 'launchd starts the agents it holds at login' },
  { pattern: '~/.gitconfig', reason: GIT },
  { pattern: '~/.config/git/**', reason: `${GIT}; hooks run at each commit` },
  {
    pattern: '~/**/.git/**',
    reason: "a repository's config and hooks run at its next git command",
  },
  {
    pattern: '~/.config/autostart/**',
    reason: 'the desktop session starts the programs it lists at login',
  },
  {
    pattern: '~/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/**',
    reason: 'Windows starts what it holds at logon',
  },
  { pattern: '~/.local/bin/**', reason: 'on the PATH: a program there replaces a command' },
  { pattern: '~/bin/**', reason: 'on the PATH: a program there replaces a command' },
  ...['~/.vimrc', '~/.vim/**', '~/.config/nvim/**', '~/.local/share/nvim/**'].map((pattern) => ({
    pattern,
    reason: EDITOR,
  })),
  ...['~/.emacs', '~/.emacs.d/**', '~/.config/emacs/**'].map((pattern) => ({
    pattern,
    reason: EDITOR,
  })),
  { pattern: '~/.vscode/**', reason: 'the editor loads the extensions it holds' },
  { pattern: '~/.local/lib/**', reason: 'Python and other tools import the modules it holds' },
  { pattern: '~/.ipython/**', reason: 'IPython runs its start-up scripts' },
  { pattern: '~/.npmrc', reason: 'npm runs the script-shell and node-options it names' },
  {
    pattern: '~/.claude/settings.json',
    reason: 'Claude Code runs the hooks and commands it names',
  },
  { pattern: '~/.claude/plugins/**', reason: 'Claude Code loads the plugins it holds' },
];

let compiled: readonly (CodeBearingPath & { readonly compiled: HomePattern })[] | undefined;

function compiledList(): NonNullable<typeof compiled> {
  compiled ??= CODE_BEARING_PATHS.map((entry) => ({
    ...entry,
    compiled: parseListPattern(entry.pattern),
  }));
  return compiled;
}

/** The code-bearing paths a policy pattern (or exact path) reaches or covers. */
export function codeBearingReach(pattern: string): CodeBearingPath[] {
  const own = parseHomePattern(pattern);
  return compiledList()
    .filter((entry) => patternsOverlap(own, entry.compiled))
    .map(({ pattern: listed, reason }) => ({ pattern: listed, reason }));
}

/** One allowed path of a policy that is code execution, where it is allowed, and what it reaches. */
export interface CodeBearingGrant {
  /** The policy field (`domains.files.patterns[0]`), or `declared by <domain>` for a default. */
  readonly field: string;
  readonly domain: string;
  /** The allowed path or pattern. */
  readonly allowed: string;
  readonly reaches: readonly CodeBearingPath[];
}

/**
 * Every path `policy` allows a `config:install` to write that is code execution: its path
 * overrides and patterns, and — given the plugins' declarations — the declared default paths of
 * the domains it serves.
 */
export function codeBearingGrants(
  policy: NodePolicy,
  declarations: readonly DomainDeclaration[] = [],
): CodeBearingGrant[] {
  const grants: CodeBearingGrant[] = [];
  const add = (domain: string, field: string, allowed: string): void => {
    const reaches = codeBearingReach(allowed);
    if (reaches.length > 0) grants.push({ field, domain, allowed, reaches });
  };
  for (const [domain, section] of Object.entries(policy.domains).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  )) {
    const declaration = declarations.find((d) => d.domain === domain);
    for (const file of [...(declaration?.files ?? []), ...(declaration?.derivedPaths ?? [])]) {
      add(domain, `declared by ${domain} (${file.id})`, file.path);
    }
    for (const [id, patterns] of Object.entries(section.paths ?? {})) {
      patterns.forEach((entry, index) =>
        add(domain, `domains.${domain}.paths.${id}[${index}]`, policyPatternText(entry)),
      );
    }
    (section.patterns ?? []).forEach((entry, index) =>
      add(domain, `domains.${domain}.patterns[${index}]`, policyPatternText(entry)),
    );
  }
  return grants;
}

/** The grants as lines an operator reads (indented by the caller). */
export function describeCodeBearing(grants: readonly CodeBearingGrant[]): string[] {
  if (grants.length === 0) return [];
  const lines = [
    "code execution: a config:install of these paths can run code as this node's user",
  ];
  for (const grant of grants) {
    for (const reached of grant.reaches) {
      const via = reached.pattern === grant.allowed ? '' : ` reaches ${reached.pattern}`;
      lines.push(`  ${grant.allowed}${via} (${grant.field}): ${reached.reason}`);
    }
  }
  return lines;
}
