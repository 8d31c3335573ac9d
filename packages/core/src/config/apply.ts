/**
 * `fleet apply` (contract §7), its pure half: the fleet-wide plan over hosts × domains, what each
 * file's drift state allows, the saved plan (`--out`) and its check against a plan derived again
 * (`--plan`), the result document `fleet.apply/v1`, and which exit code wins across hosts.
 *
 * What a state allows is the one rule of contract §8.2 that `config install` applies through
 * `plannedInstall`: `stale` and `missing` are installed; `diverged`, `modified` and `deleted` are
 * refused without `--force`; `error` and `unsupported` are never installed. Unlike `config
 * install`, one refused file does not stop the host's other files: each file's install is safe on
 * its own (the node checks each file's live sha256), as `harness reconcile` heals per file — the
 * refused file is reported and the host's exit says so (7).
 */
import { createHash } from 'node:crypto';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { FleetError, mostUrgentExit, type Problem } from '../errors.js';
import type { DriftState } from '../interfaces/drift.js';
import type { DomainPlan } from './plan.js';
import { receiptSchema } from '../wire/receipt.js';

export const APPLY_SCHEMA = 'fleet.apply/v1';
export const APPLY_PLAN_SCHEMA = 'fleet.apply-plan/v1';

/**
 * What apply does with a file: `install` it, leave it (`current`), `refused` (a hand change
 * without `--force`), `blocked` (an `error` or `unsupported` file: never, whatever the flags).
 */
export type ApplyDecision = 'install' | 'current' | 'refused' | 'blocked';

const FORCED_STATES: readonly DriftState[] = ['diverged', 'modified', 'deleted'];

/** The decision for one file of drift state `state` (contract §7, §8.2). */
export function applyDecision(state: DriftState, force: boolean): ApplyDecision {
  if (state === 'current') return 'current';
  if (state === 'stale' || state === 'missing') return 'install';
  if (FORCED_STATES.includes(state)) return force ? 'install' : 'refused';
  return 'blocked';
}

const sha256Hex = z.lazy(() => z.string().regex(/^[0-9a-f]{64}$/));
const errorSchema = z.lazy(() =>
  z.strictObject({
    code: z.string(),
    message: z.string(),
    exitCode: z.number().int().nonnegative(),
  }),
);

export const applyFileSchema = z.lazy(() =>
  z.strictObject({
    fileId: z.string(),
    path: z.string(),
    state: z.enum([
      'current',
      'stale',
      'modified',
      'diverged',
      'missing',
      'deleted',
      'unmanaged',
      'unsupported',
      'error',
    ]),
    decision: z.enum(['install', 'current', 'refused', 'blocked']),
    /** The live sha256 the plan was made against (`null`: no file). */
    liveSha256: sha256Hex.nullable(),
    /**
     * The sha256 of the content an install sends (template space), `null` when not computable. A
     * source that is bytes (`encoding: base64`, contract §10.4) is hashed as the bytes written, the
     * live file's `sha256sum` once installed — never its base64 text.
     */
    desiredSha256: sha256Hex.nullable(),
    localLines: z.number().int().nonnegative().optional(),
    detail: z.string().optional(),
    /** Redacted unified diff (made on the node side of the redaction). */
    diff: z.string().optional(),
  }),
);

export const applyDomainSchema = z.strictObject({
  domain: z.string(),
  files: z.array(applyFileSchema),
  /** The coupled actions an install of the domain runs (kinds: the node's policy decides). */
  actions: z.array(z.string()),
});

export const applyHostPlanSchema = z.lazy(() =>
  z.strictObject({
    host: z.string(),
    /** `planned`: the host was read; otherwise why it could not be (nothing is sent to it). */
    status: z.enum(['planned', 'unreachable', 'denied', 'error']),
    error: errorSchema.optional(),
    domains: z.array(applyDomainSchema),
  }),
);

/** The saved plan (`--out`): what `--plan PLAN --confirm` installs exactly, or refuses. */
export const applyPlanSchema = z.lazy(() =>
  z.strictObject({
    schema: z.literal(APPLY_PLAN_SCHEMA),
    createdAt: z.string(),
    /** The commit fleet.yaml, hosts/ and domains/ were read at: the plan binds it. */
    repoCommit: z.string().regex(/^[0-9a-f]{40,64}$/),
    force: z.boolean(),
    hosts: z.array(applyHostPlanSchema),
  }),
);

export type ApplyFile = z.infer<typeof applyFileSchema>;
export type ApplyDomain = z.infer<typeof applyDomainSchema>;
export type ApplyHostPlan = z.infer<typeof applyHostPlanSchema>;
export type ApplyPlan = z.infer<typeof applyPlanSchema>;

export const applyDomainResultSchema = applyDomainSchema.extend({
  /** The node's receipt when an install was sent. */
  receipt: receiptSchema.optional(),
  /** Why the install was refused or failed (nothing, or a rolled-back operation, on the node). */
  error: errorSchema.optional(),
});

export const applyHostResultSchema = z.lazy(() =>
  z.strictObject({
    host: z.string(),
    /**
     * `planned` (no `--confirm`: nothing sent); `current` (nothing to install); `installed` /
     * `unchanged` (every install verified); `refused` (something was refused or blocked: the rest
     * was installed); `unreachable`, `denied`, `failed`.
     */
    outcome: z.enum([
      'planned',
      'current',
      'installed',
      'unchanged',
      'refused',
      'unreachable',
      'denied',
      'failed',
    ]),
    exitCode: z.number().int().nonnegative(),
    error: errorSchema.optional(),
    domains: z.array(applyDomainResultSchema),
  }),
);

export const applyDocumentSchema = z.lazy(() =>
  z.strictObject({
    /** The fleet repository the verb used (its real path): on `--json` output, not in report files. */
    repository: z.string().optional(),
    schema: z.literal(APPLY_SCHEMA),
    generatedAt: z.string(),
    repoCommit: z.string(),
    confirmed: z.boolean(),
    force: z.boolean(),
    /** The saved plan this run wrote (`--out`) or installed (`--plan`). */
    planFile: z.string().optional(),
    summary: z.strictObject({
      hosts: z.number().int().nonnegative(),
      install: z.number().int().nonnegative(),
      refused: z.number().int().nonnegative(),
      blocked: z.number().int().nonnegative(),
      installed: z.number().int().nonnegative(),
      failed: z.number().int().nonnegative(),
      unreachable: z.number().int().nonnegative(),
    }),
    hosts: z.array(applyHostResultSchema),
    exitCode: z.number().int().nonnegative(),
  }),
);

export type ApplyDomainResult = z.infer<typeof applyDomainResultSchema>;
export type ApplyHostResult = z.infer<typeof applyHostResultSchema>;
export type ApplyDocument = z.infer<typeof applyDocumentSchema>;

/**
 * The sha256 a plan names for a file's desired content: of its UTF-8 text, or of the bytes a
 * base64-carried source writes (contract §10.4) — what the node's receipt names as `afterSha256`.
 */
export function desiredSha256(desired: string, encoding?: 'base64'): string {
  const bytes =
    encoding === undefined ? Buffer.from(desired, 'utf8') : Buffer.from(desired, encoding);
  return createHash('sha256').update(bytes).digest('hex');
}

/** One domain plan of a host as apply sees it: every file with its decision. */
export function applyDomainOf(plan: DomainPlan, force: boolean): ApplyDomain {
  return {
    domain: plan.domain,
    files: plan.files.map((file) => ({
      fileId: file.fileId,
      path: file.path,
      state: file.item.state,
      // A file whose desired content cannot be computed is blocked whatever its state says.
      decision: file.desired === null ? 'blocked' : applyDecision(file.item.state, force),
      liveSha256: file.liveSha256,
      desiredSha256: file.desired === null ? null : desiredSha256(file.desired, file.encoding),
      ...(file.item.localLines ? { localLines: file.item.localLines } : {}),
      ...(file.item.detail === undefined ? {} : { detail: file.item.detail }),
      ...(file.item.diff ? { diff: file.item.diff } : {}),
    })),
    actions: plan.actions.map((action) => action.kind),
  };
}

/** The host's status when it could not be read, from its error's code. */
export function unreadHostStatus(error: {
  readonly code: string;
  readonly exitCode: number;
}): ApplyHostPlan['status'] {
  if (error.exitCode === 5) return 'unreachable';
  if (error.exitCode === 4) return 'denied';
  return 'error';
}

/** Files the plan installs, per domain (`[]`: nothing to do there). */
export function filesToInstall(domain: ApplyDomain): readonly ApplyFile[] {
  return domain.files.filter((file) => file.decision === 'install');
}

/**
 * The exit code of one host's part of a confirmed apply: its domains' install failures, and 7
 * when a file was refused or blocked. 0 only when everything planned was installed.
 */
export function hostExitCode(domains: readonly ApplyDomainResult[], errorExit?: number): number {
  const codes: number[] = errorExit === undefined ? [] : [errorExit];
  for (const domain of domains) {
    if (domain.files.some((file) => file.decision === 'refused' || file.decision === 'blocked'))
      codes.push(7);
    if (domain.receipt && (domain.receipt.outcome === 'rolled-back' || !domain.receipt.verified))
      codes.push(6);
  }
  return mostUrgentExit(codes);
}

/**
 * What moved between a saved plan and the same plan derived again at apply time: each file whose
 * live sha256 (or desired content) differs, each file or domain that appeared or vanished, each
 * host that was read then and not now. `[]` when the saved plan still holds.
 */
export function planMoves(saved: ApplyHostPlan, now: ApplyHostPlan): Problem[] {
  const problems: Problem[] = [];
  const where = (domain: string, path?: string) =>
    `${saved.host}${path === undefined ? ` ${domain}` : `:${path}`}`;
  for (const domain of saved.domains) {
    const current = now.domains.find((d) => d.domain === domain.domain);
    if (!current) {
      problems.push({ file: where(domain.domain), message: 'the domain is no longer planned' });
      continue;
    }
    for (const file of domain.files) {
      const live = current.files.find((f) => f.path === file.path);
      if (!live) {
        problems.push({ file: where(domain.domain, file.path), message: 'no longer planned' });
      } else if (live.liveSha256 !== file.liveSha256) {
        problems.push({
          file: where(domain.domain, file.path),
          message: `the live file moved: planned against ${file.liveSha256 ?? 'no file'}, now ${live.liveSha256 ?? 'no file'}`,
        });
      } else if (live.desiredSha256 !== file.desiredSha256) {
        problems.push({
          file: where(domain.domain, file.path),
          message: 'the content to install differs from the planned one',
        });
      }
    }
    for (const file of current.files) {
      if (!domain.files.some((f) => f.path === file.path))
        problems.push({ file: where(domain.domain, file.path), message: 'a file not in the plan' });
    }
  }
  return problems;
}

/** Parses a saved plan (`--plan`): a clear USAGE error for anything that is not one. */
export function parseApplyPlan(text: string, file: string): ApplyPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FleetError('USAGE', `${file} is not a saved apply plan: ${(error as Error).message}`);
  }
  const parsed = applyPlanSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FleetError(
      'USAGE',
      `${file} is not a ${APPLY_PLAN_SCHEMA} document: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** The summary counts of an apply document. */
export function applySummary(hosts: readonly ApplyHostResult[]): ApplyDocument['summary'] {
  const files = hosts.flatMap((host) => host.domains.flatMap((domain) => domain.files));
  const count = (decision: ApplyDecision) => files.filter((f) => f.decision === decision).length;
  return {
    hosts: hosts.length,
    install: count('install'),
    refused: count('refused'),
    blocked: count('blocked'),
    installed: hosts.filter((h) => h.outcome === 'installed' || h.outcome === 'unchanged').length,
    failed: hosts.filter((h) => h.outcome === 'failed' || h.outcome === 'denied').length,
    unreachable: hosts.filter((h) => h.outcome === 'unreachable').length,
  };
}
