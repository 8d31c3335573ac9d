import type { DomainDeclaration } from '@fleet/core/plugin';

export const POLICY_MARKERS = {
  begin: '<!-- fleet:harness-policy:begin -->',
  end: '<!-- fleet:harness-policy:end -->',
} as const;

const EXAMPLE = `# Agent policy

Canonical policy for coding agents on this fleet. \`~/.claude/CLAUDE.md\` is this whole file;
\`~/.codex/AGENTS.md\` and \`~/.gemini/GEMINI.md\` receive only the section between the markers.

${POLICY_MARKERS.begin}
## Policy

- Work in small, reviewed steps; commit with honest messages.
- Never write secrets into files, commits or messages: refer to them by name.
- Ask before any destructive operation on shared state.
${POLICY_MARKERS.end}
`;

/**
 * The harness-policy domain (contract §10.3): CLAUDE.md is managed whole (gated by the history-aware
 * check); AGENTS.md and GEMINI.md only within their markers, everything outside them preserved
 * byte for byte. The block is regenerated from the canonical CLAUDE.md on every run.
 */
export const harnessPolicyDomain = {
  domain: 'harness-policy',
  description: 'agent policy files: CLAUDE.md whole, AGENTS.md and GEMINI.md by block',
  files: [
    {
      id: 'CLAUDE.md',
      path: '~/.claude/CLAUDE.md',
      canonical: 'CLAUDE.md',
      kind: 'whole',
      format: 'markdown',
    },
    {
      id: 'AGENTS.md',
      path: '~/.codex/AGENTS.md',
      canonical: 'CLAUDE.md',
      kind: 'block',
      format: 'markdown',
      markers: POLICY_MARKERS,
    },
    {
      id: 'GEMINI.md',
      path: '~/.gemini/GEMINI.md',
      canonical: 'CLAUDE.md',
      kind: 'block',
      format: 'markdown',
      markers: POLICY_MARKERS,
    },
  ],
  hostVariables: [],
  coupling: { kind: 'none' },
  examples: [{ path: 'CLAUDE.md', content: EXAMPLE }],
} as const satisfies DomainDeclaration;
