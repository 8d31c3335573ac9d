// The benchmark workload of contract §14's peer rows: five templated whole files per host, the
// same on every side — fleet renders them from the bench-only domain `bench-files` (./plugin), dotdrop
// and Ansible from the same template text (dotdrop spells a placeholder `{{@@ host.NAME @@}}`).
// Each file names host variables (`node_id`, `bench_role`), so every host's copy differs.
//
// `published` is the version already in the repository's history (what a drifted host still
// has: `stale`); `current` is the one every tool installs.

/** Host variables the templates use (declared by the domain; the lab sets them per host). */
export const HOST_VARIABLES = ['node_id', 'bench_role'];

const shellrc = (
  extra,
) => `# Managed by fleet (bench workload): shell settings for {{ host.node_id }}
export FLEET_NODE={{ host.node_id }}
export FLEET_ROLE={{ host.bench_role }}
export EDITOR=vi
export PAGER=less
export LESS=-R
export HISTSIZE=10000
export HISTFILESIZE=20000
alias ll='ls -la'
alias gs='git status --short'
${extra}`;

const gitconfig = (extra) => `# Managed by fleet (bench workload)
[user]
	name = {{ host.node_id }} automation
	email = {{ host.node_id }}@fleet.invalid
[core]
	autocrlf = input
	editor = vi
[pull]
	ff = only
[push]
	default = simple
${extra}`;

const editorconfig = (extra) => `# Managed by fleet (bench workload) on {{ host.node_id }}
root = true

[*]
end_of_line = lf
insert_final_newline = true
charset = utf-8
indent_style = space
indent_size = 2

[*.md]
trim_trailing_whitespace = false
${extra}`;

const toolYaml = (extra) => `# Managed by fleet (bench workload)
node: {{ host.node_id }}
role: {{ host.bench_role }}
log:
  level: info
  file: /var/tmp/tool-{{ host.node_id }}.log
cache:
  size_mb: 64
  ttl: 10m
endpoints:
  - name: primary
    url: http://127.0.0.1:9100
  - name: fallback
    url: http://127.0.0.1:9101
${extra}`;

const notes = (extra) => `# Notes for {{ host.node_id }}

This host runs the {{ host.bench_role }} role. Its configuration comes from the fleet
repository; change it there, never by hand on the host.

- Files: shell settings, git, editor, the tool's YAML.
- Owner: the platform team.
${extra}`;

/** The five files: the domain's declaration data and both versions of each canonical text. */
export const FILES = [
  {
    id: 'shellrc',
    path: '~/.config/bench/shellrc',
    format: 'text',
    make: shellrc,
    v1: '',
    v2: "alias gl='git log --oneline -20'\n",
  },
  {
    id: 'gitconfig',
    path: '~/.config/bench/gitconfig',
    format: 'text',
    make: gitconfig,
    v1: '',
    v2: '[fetch]\n\tprune = true\n',
  },
  {
    id: 'editorconfig',
    path: '~/.config/bench/editorconfig',
    format: 'text',
    make: editorconfig,
    v1: '',
    v2: '\n[Makefile]\nindent_style = tab\n',
  },
  {
    id: 'tool.yaml',
    path: '~/.config/bench/tool.yaml',
    format: 'yaml',
    make: toolYaml,
    v1: '',
    v2: 'retries: 3\n',
  },
  {
    id: 'notes.md',
    path: '~/.config/bench/notes.md',
    format: 'markdown',
    make: notes,
    v1: '',
    v2: '- Reviewed: every quarter.\n',
  },
].map(({ make, v1, v2, ...file }) => ({
  ...file,
  canonical: file.id,
  published: make(v1),
  current: make(v2),
}));

/** Renders a template for a host (`{{ host.NAME }}` only, as the workload uses). */
export function render(template, variables) {
  return template.replace(/\{\{ host\.([A-Za-z_][A-Za-z0-9_]*) \}\}/g, (_, name) => {
    if (!(name in variables)) throw new Error(`bench workload: no host variable ${name}`);
    return variables[name];
  });
}

/** The same template in dotdrop's syntax. */
export function dotdropTemplate(template) {
  return template.replace(/\{\{ (host\.[A-Za-z0-9_]+) \}\}/g, '{{@@ $1 @@}}');
}
