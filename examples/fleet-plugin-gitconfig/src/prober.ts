/**
 * The `gitconfig.identity` prober (fleet `Prober`, layer `derived`): the file is not the whole
 * story — git applies the *last* value it reads, across `~/.gitconfig`, its `[include]`s and
 * `$XDG_CONFIG_HOME/git/config`. A `user.email` set below the fleet block, or in an included file,
 * silently wins over it. This prober asks git itself.
 *
 * Node half (`collect`, read-only): `git config --global --get user.email` and `user.name`, run
 * through the node's `ProcessRunner` (never a shell; the controller gives the child the node's
 * home as `HOME`). Operator half (`evaluate`, pure): compares them with the host's `git_email` and
 * `git_name` variables: `current`, `missing` (git resolves none: the block is not installed yet),
 * `diverged` (git resolves another value: something overrides the block) or `unsupported` (no git).
 */
import type { DriftItem, JsonObject, NodeContext, ProbeDesired, Prober } from '@fleet/core/plugin';
import { DOMAIN, IDENTITY_PROBER } from './domain.js';

/** What `collect` reports: plain JSON, since it crosses the wire (redacted like any content). */
export type IdentityFacts =
  | { readonly git: 'unavailable'; readonly detail: string }
  | { readonly git: 'present'; readonly email: string | null; readonly name: string | null };

async function get(
  ctx: NodeContext,
  key: string,
): Promise<{ value: string | null } | { failed: string }> {
  const result = await ctx.processes.run({
    command: 'git',
    args: ['config', '--global', '--get', key],
    timeoutMs: 10_000,
  });
  if (result.exitCode === 0) return { value: result.stdout.replace(/\r?\n$/, '') };
  if (result.exitCode === 1) return { value: null }; // git: the key is not set
  return { failed: result.timedOut ? 'git timed out' : `git exited ${result.exitCode}` };
}

async function collect(ctx: NodeContext, _parameters: JsonObject): Promise<IdentityFacts> {
  const email = await get(ctx, 'user.email');
  if ('failed' in email) return { git: 'unavailable', detail: email.failed };
  const name = await get(ctx, 'user.name');
  if ('failed' in name) return { git: 'unavailable', detail: name.failed };
  return { git: 'present', email: email.value, name: name.value };
}

function evaluate(facts: IdentityFacts, desired: ProbeDesired): readonly DriftItem[] {
  const base = { layer: 'derived' as const, domain: DOMAIN, path: '~/.gitconfig' };
  if (facts.git === 'unavailable') {
    return [
      {
        ...base,
        state: 'unsupported',
        detail: `cannot ask git for its effective identity: ${facts.detail}`,
      },
    ];
  }
  const unset: string[] = [];
  const overridden: string[] = [];
  const compare = (key: 'email' | 'name', variable: string): void => {
    const expected = desired.variables[variable];
    if (expected === undefined) return; // the host does not set it: nothing to hold git to
    const actual = facts[key];
    if (actual === null) unset.push(`user.${key}`);
    else if (actual !== expected) {
      overridden.push(
        `git resolves user.${key} to ${JSON.stringify(actual)}, not ${variable} ${JSON.stringify(expected)}`,
      );
    }
  };
  compare('email', 'git_email');
  compare('name', 'git_name');
  if (overridden.length > 0) {
    return [
      {
        ...base,
        state: 'diverged',
        detail: `${overridden.join('; ')}: a setting after the fleet block, an [include] or ~/.config/git/config overrides it`,
      },
    ];
  }
  if (unset.length > 0) {
    return [
      {
        ...base,
        state: 'missing',
        detail: `git resolves no ${unset.join(' and ')}: the fleet block is not installed`,
      },
    ];
  }
  return [{ ...base, state: 'current' }];
}

/** Makes the prober (loaded lazily through `register.ts`). */
export function createIdentityProber(): Prober<IdentityFacts> {
  return { id: IDENTITY_PROBER, layer: 'derived', collect, evaluate };
}
