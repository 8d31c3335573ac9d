/**
 * `fleet bootstrap plan|apply`'s service: derives a host's sealed runtime bootstrap plan, and
 * applies one exactly as planned, through the controller or the SSH recovery receiver
 * (runtime/bootstrap-plan.ts, runtime/bootstrap-apply.ts; contract §12). Needs no plugin: nothing
 * is injected.
 */
import { writeFile } from 'node:fs/promises';
import { FleetError, sealPlan, type BootstrapPlan } from '@fleet/core';
import { injectable } from '@fleet/core/di';
import { dirtyWarning } from '../runtime/artifact.js';
import {
  applyBootstrapPlan,
  type BootstrapApplied,
  type BootstrapApplyInput,
} from '../runtime/bootstrap-apply.js';
import { derivePlan } from '../runtime/bootstrap-plan.js';
import { loadHostRuntime } from '../runtime/host.js';

export { renderBootstrapPlan } from '../runtime/render.js';
export type { BootstrapApplied } from '../runtime/bootstrap-apply.js';

export interface BootstrapPlanOptions {
  readonly root: string;
  readonly host: string;
  /** The runtime tarball (default: fleet.yaml's artifact for canonicalVersion). */
  readonly artifact?: string;
  /** Where to write the sealed plan (never over an existing file; mode 0600). */
  readonly out?: string;
  /** Per request. */
  readonly timeoutMs: number;
  /** Warnings for stderr (an artifact built from a dirty tree). */
  readonly onNote?: (line: string) => void;
}

@injectable()
export class BootstrapService {
  /** The sealed plan (`bootstrap apply` reads it back strictly), written to `out` if given. */
  async plan(options: BootstrapPlanOptions): Promise<BootstrapPlan> {
    const host = await loadHostRuntime(options.root, options.host, {
      timeoutMs: options.timeoutMs,
    });
    const derived = await derivePlan(host, options.artifact);
    const dirty = dirtyWarning(derived.artifact);
    if (dirty !== null) options.onNote?.(dirty);
    const plan = sealPlan(derived.body);
    if (options.out !== undefined) await writePlan(options.out, plan);
    return plan;
  }

  /** Applies a plan file exactly as planned (`confirm`), or answers it unconfirmed. */
  apply(options: BootstrapApplyInput): Promise<BootstrapApplied> {
    return applyBootstrapPlan(options);
  }
}

async function writePlan(out: string, plan: BootstrapPlan): Promise<void> {
  try {
    await writeFile(out, `${JSON.stringify(plan, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    throw new FleetError(
      'USAGE',
      `cannot write the plan to ${out}: ${String((error as NodeJS.ErrnoException).code ?? error)} (an existing plan is never overwritten)`,
    );
  }
}
