/**
 * The controller's own `SafeFileWriter` (`OperationWriter`, writer.ts) over a home, for a domain's
 * node half outside a running controller: `@fleet/testkit`'s fake hosts hand it to the installers
 * under test, so plugin tests exercise the real compare-and-swap, backup, atomic durable replace
 * and restore — not a look-alike. It builds what the writer needs the way the controller does: the
 * allowlist from the domains' declarations (every file and derived path, as declared), the per-path
 * locks, the state directories (0700) and the operation's journal (`begin`), under
 * `<home>/.local/state/fleet/`. Token re-checks and the audit log are the HTTP handler's business
 * and are not part of it. Its node policy (per-host path overrides, `symlinkInto`) is the one
 * given, by default one serving the declared domains at their declared paths (what
 * `fleet node-policy init` writes).
 */
import { realpath } from 'node:fs/promises';
import { ulid } from 'ulid';
import {
  defaultNodePolicy,
  nodePolicySchema,
  type Clock,
  type DomainDeclaration,
  type NodePolicy,
  type NodePolicyInput,
  type Registry,
} from '@fleet/core/node';
import { Allowlist } from './allowlist.js';
import { systemClock } from './context.js';
import { ensurePrivateDir } from './fs/durable.js';
import { PathLocks } from './locks.js';
import { OperationStore } from './operations.js';
import { DEFAULT_LIMITS } from './runtime.js';
import { statePaths } from './state-paths.js';
import { OperationWriter } from './writer.js';

export interface HomeWriterOptions {
  /** The node's home (`~`), an existing directory. */
  readonly home: string;
  /** The domains whose declared paths make the allowlist (at least the writer's own). */
  readonly declarations: readonly DomainDeclaration[];
  /** The domain the writer writes for (default: the first declaration's). */
  readonly domain?: string;
  /** The operation id (a ULID; default: a new one). */
  readonly operationId?: string;
  readonly clock?: Clock;
  /** File size bound (default the controller's, 1 MiB). */
  readonly fileLimit?: number;
  /** Runs right before each rename (the controller re-checks the caller's token there). */
  readonly beforeCommit?: () => Promise<void>;
  /** The node policy (default: serving every declaration's domain at its declared paths). */
  readonly policy?: NodePolicy | NodePolicyInput;
}

/** The allowlist's view of a registry: only `domains()` is read. */
function declarationsAsRegistry(declarations: readonly DomainDeclaration[]): Registry {
  return {
    domains: () => declarations.map((descriptor) => ({ descriptor })),
  } as unknown as Registry;
}

/** A real {@link OperationWriter} over `home` for one operation of `domain`. */
export async function createHomeWriter(options: HomeWriterOptions): Promise<OperationWriter> {
  const domain = options.domain ?? options.declarations[0]?.domain;
  if (domain === undefined) throw new Error('createHomeWriter: no domain declaration given');
  const operationId = options.operationId ?? ulid();
  const clock = options.clock ?? systemClock;
  // As the controller does: every safe-path check compares real paths.
  const home = await realpath(options.home);
  const state = statePaths(home);
  for (const dir of [state.root, state.backups]) await ensurePrivateDir(home, dir);
  const operations = new OperationStore(state);
  await operations.init();
  const policy: NodePolicy = nodePolicySchema.parse(
    options.policy ?? defaultNodePolicy(options.declarations.map((d) => d.domain)),
  );
  const allowlist = new Allowlist(declarationsAsRegistry(options.declarations), policy);
  const paths = allowlist.forDomain(domain).map((entry) => entry.path);
  await operations.begin({
    event: 'begin',
    operationId,
    operation: 'install',
    domain,
    client: null,
    paths,
    startedAt: clock.now().toISOString(),
  });
  return new OperationWriter({
    home,
    state,
    operationId,
    domain,
    allowlist,
    locks: new PathLocks(),
    operations,
    clock,
    fileLimit: options.fileLimit ?? DEFAULT_LIMITS.maxFileBytes,
    beforeCommit: options.beforeCommit ?? (() => Promise.resolve()),
  });
}
