/**
 * The operator's half of the runtime lifecycle (contract §11, §12), pure: what a host's new runtime
 * must report (the acceptance expectation), the bootstrap plan with its id — the sha256 of its
 * canonical form — and the reading of a finished transaction into an outcome and exit code.
 */
import { createHash } from 'node:crypto';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { FleetError } from '../errors.js';
import type { HostEntry } from '../repo/schema.js';
import type { PinnedPlugin } from '../schemas/runtime-plugins.js';
import { plannedListenSchema } from '../schemas/controller-listen.js';
import { FLEET_PROTOCOL_VERSION, sha256Schema } from '../wire/protocol.js';
import {
  runtimeExpectationSchema,
  type RuntimeExpectation,
  type RuntimeStatusResponse,
} from '../wire/runtime.js';

/** What the artifact is, read from it and from fleet.yaml. */
export interface ArtifactIdentity {
  /** Repo-relative (or absolute) file the operator reads. */
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  /** `package/package.json` of the tarball. */
  readonly package: string;
  readonly version: string;
  /**
   * The commit label the artifact's build record names (`package/fleet-build.json`, contract
   * §1.8), which fleet.yaml's `artifacts[].commit` must equal; `null` only for an artifact
   * without one (refused before any plan or upgrade is made).
   */
  readonly commit: string | null;
}

/** The acceptance expectation for `host` running `artifact` (pure). */
export function targetExpectation(input: {
  readonly nodeId: string;
  readonly host: HostEntry;
  readonly artifact: ArtifactIdentity;
  /** fleet.yaml's `plugins`: the new runtime must have loaded each (contract §10.5). */
  readonly plugins?: readonly PinnedPlugin[];
}): RuntimeExpectation {
  return {
    nodeId: input.nodeId,
    package: input.artifact.package,
    version: input.artifact.version,
    build: { sha256: input.artifact.sha256, commit: input.artifact.commit },
    protocol: { min: FLEET_PROTOCOL_VERSION, max: FLEET_PROTOCOL_VERSION },
    catalog: {
      domains: [...input.host.domains].sort(),
      probers: [],
      bootstrapAdapters: [input.host.supervisor],
      // Only when fleet.yaml names plugins: a plan without them keeps its id.
      ...(input.plugins && input.plugins.length > 0
        ? { plugins: input.plugins.map(({ name, version, sha256 }) => ({ name, version, sha256 })) }
        : {}),
    },
  };
}

export const BOOTSTRAP_PLAN_SCHEMA = 'fleet.bootstrap-plan/v1';

const planBodySchema = z.strictObject({
  schema: z.literal(BOOTSTRAP_PLAN_SCHEMA),
  host: z.string().min(1),
  nodeId: z.string().min(1),
  platform: z.enum(['linux', 'darwin', 'win32']),
  supervisor: z.string().min(1),
  /** How apply reaches the node: its controller, or (with `--recover`) SSH. */
  route: z.enum(['controller', 'ssh']),
  artifact: z.strictObject({
    file: z.string().min(1),
    sha256: sha256Schema,
    bytes: z.number().int().positive(),
    package: z.string().min(1),
    version: z.string().min(1),
    commit: z.string().nullable(),
  }),
  /** The generation observed running (the rollback target), `null` when none or unknown. */
  prior: z.strictObject({
    build: sha256Schema.nullable(),
    observedThrough: z.enum(['controller', 'ssh', 'none']),
  }),
  repoCommit: z.string().nullable(),
  protocol: z.number().int().positive(),
  /** What the new runtime must report to be accepted (includes the expected catalog). */
  target: runtimeExpectationSchema,
  /**
   * Where the new controller listens: fleet.yaml's `controller` URL (`controllerListen`), which
   * the runner installs as its flags (contract §12, issue 35), and fleet.yaml's pinned
   * `tls.fingerprint`, which the node's certificate must match before anything is activated.
   * Optional so a plan written by an older CLI still reads (its id then
   * differs from a new derivation: apply asks for a new plan).
   */
  listen: plannedListenSchema.optional(),
});
export type BootstrapPlanBody = z.infer<typeof planBodySchema>;

export const bootstrapPlanSchema = planBodySchema.extend({ id: sha256Schema });
export type BootstrapPlan = z.infer<typeof bootstrapPlanSchema>;

/** JSON with object keys sorted at every level: one text per value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The plan id: sha256 of the canonical form of everything but the id. */
export function planId(body: BootstrapPlanBody): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export function sealPlan(body: BootstrapPlanBody): BootstrapPlan {
  return { ...planBodySchema.parse(body), id: planId(body) };
}

/**
 * Reads a plan file: strict shape, and its id must be the hash of its content — a plan edited
 * after it was written is refused (`PLAN_MISMATCH`, exit 3).
 */
export function readPlan(value: unknown, source: string): BootstrapPlan {
  const parsed = bootstrapPlanSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FleetError(
      'USAGE',
      `${source} is not a bootstrap plan: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'bad shape'}`,
    );
  }
  const { id, ...body } = parsed.data;
  const actual = planId(body);
  if (actual !== id) {
    throw new FleetError(
      'PLAN_MISMATCH',
      `${source} was edited after it was planned (its content hashes to ${actual.slice(0, 12)}, not its id ${id.slice(0, 12)}); nothing was applied`,
      { suggestions: ['run `fleet bootstrap plan` again and review the new plan'] },
    );
  }
  return parsed.data;
}

/** The fields where two plans differ (for the "plan changed" message). */
export function planDifferences(a: BootstrapPlanBody, b: BootstrapPlanBody): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys]
    .filter(
      (key) =>
        canonicalJson((a as Record<string, unknown>)[key]) !==
        canonicalJson((b as Record<string, unknown>)[key]),
    )
    .sort();
}

export type TransactionVerdict =
  | { readonly done: false }
  | {
      readonly done: true;
      readonly outcome: 'accepted' | 'rolled-back' | 'manual-recovery-required' | 'failed';
      /** The error to raise, or `null` for a success. */
      readonly error: FleetError | null;
    };

/** Reads a status answer for transaction `id` (or the newest, for a rollback) into a verdict. */
export function transactionVerdict(
  status: RuntimeStatusResponse,
  id: string | null,
): TransactionVerdict {
  const txn = status.transaction;
  if (txn === null || (id !== null && txn.id !== id)) return { done: false };
  if (status.busy !== null || txn.outcome === null || txn.lastStep !== 'end')
    return { done: false };
  const evidence = txn.steps.map((step) => `${step.step}: ${step.detail}`);
  const failure = [...txn.steps].reverse().find((step) => step.step === 'failed');
  switch (txn.outcome) {
    case 'accepted':
      return { done: true, outcome: 'accepted', error: null };
    case 'rolled-back':
      return {
        done: true,
        outcome: 'rolled-back',
        error: new FleetError(
          'ROLLED_BACK',
          `not accepted, rolled back to ${txn.prior?.slice(0, 12) ?? 'the prior generation'}, which passed acceptance again${failure ? ` (${failure.detail})` : ''}`,
          { problems: evidence.map((message) => ({ message })) },
        ),
      };
    case 'manual-recovery-required': {
      // An older node's detail already says "manual recovery required: " (journal-history.ts):
      // said once here. The failure that led to it comes first — it is why (issue 35 item 3).
      const reason = (
        [...txn.steps].reverse().find((s) => s.step === 'manual-recovery-required')?.detail ??
        'see the journal'
      ).replace(/^manual recovery required:\s*/i, '');
      return {
        done: true,
        outcome: 'manual-recovery-required',
        error: new FleetError(
          'RECOVERY_REQUIRED',
          `${failure ? `${failure.detail}; ` : ''}manual recovery required: ${reason}`,
          {
            problems: evidence.map((message) => ({ message })),
            suggestions: [
              'the journal and the runner log are kept under ~/.local/state/fleet/journal/ on the node',
            ],
          },
        ),
      };
    }
    default:
      return {
        done: true,
        outcome: 'failed',
        // Exit 3, not 6: nothing was activated, so nothing needs verifying again (contract §7).
        error: new FleetError(
          'RUNTIME_NOT_ACTIVATED',
          `the transaction failed before anything was activated${failure ? `: ${failure.detail}` : ''}`,
          { problems: evidence.map((message) => ({ message })) },
        ),
      };
  }
}
