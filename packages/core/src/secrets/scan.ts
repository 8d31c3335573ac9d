/**
 * The secret scan that gates adopt (contract §4, §8.5): a captured file is already redacted on the
 * node, but redaction only knows the values in the node's env-file chain. Anything that still
 * looks like a credential — a private key block, a well-known token prefix, credentials in a URL,
 * a long high-entropy string — refuses the adoption unless the operator allows that line.
 * Findings name the line and the rule, never the value. Pure.
 */
import { scanPlaceholders } from '../render/template.js';

export interface SecretFinding {
  /** 1-based line number. */
  readonly line: number;
  /** Which rule matched (`private-key`, `github-token`, …): safe to print. */
  readonly rule: string;
}

interface Rule {
  readonly name: string;
  readonly pattern: RegExp;
}

const RULES: readonly Rule[] = [
  { name: 'private-key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/ },
  {
    name: 'github-token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/,
  },
  { name: 'gitlab-token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/ },
  { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { name: 'slack-webhook', pattern: /hooks\.slack\.com\/services\/[A-Za-z0-9/]+/ },
  { name: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { name: 'openai-or-anthropic-key', pattern: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/ },
  { name: 'stripe-key', pattern: /\b[sr]k_live_[A-Za-z0-9]{16,}/ },
  { name: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { name: 'pypi-token', pattern: /\bpypi-[A-Za-z0-9_-]{40,}/ },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { name: 'url-credentials', pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s@/]+@/i },
];

/** Runs of characters a token is made of, long enough to be a credential. */
const CANDIDATE = /[A-Za-z0-9+/_=-]{32,}/g;

/** Shannon entropy in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * A long run that mixes letters and digits with high entropy. Hex strings are judged by hex's own
 * ceiling (4 bits/char); a long run of one character class (a path, a word) never qualifies.
 */
function looksRandom(candidate: string): boolean {
  if (!/[0-9]/.test(candidate) || !/[A-Za-z]/.test(candidate)) return false;
  const hex = /^[0-9a-fA-F]+$/.test(candidate);
  return entropy(candidate) >= (hex ? 3.5 : 4.2);
}

/** Every line that still looks like it holds a credential, with the rule that matched. */
export function scanForSecrets(text: string): SecretFinding[] {
  // Placeholders are names, not values: blank them out before scanning.
  let scrubbed = text;
  for (const ph of scanPlaceholders(text).placeholders.reverse()) {
    scrubbed = scrubbed.slice(0, ph.start) + ' '.repeat(ph.end - ph.start) + scrubbed.slice(ph.end);
  }
  const findings: SecretFinding[] = [];
  scrubbed.split('\n').forEach((line, index) => {
    const rule = RULES.find((candidate) => candidate.pattern.test(line));
    if (rule) {
      findings.push({ line: index + 1, rule: rule.name });
      return;
    }
    for (const match of line.matchAll(CANDIDATE)) {
      if (looksRandom(match[0])) {
        findings.push({ line: index + 1, rule: 'high-entropy-string' });
        return;
      }
    }
  });
  return findings;
}
