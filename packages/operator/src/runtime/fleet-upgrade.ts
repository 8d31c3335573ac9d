/**
 * `fleet upgrade --all` / `--host H…` (issue 36 item 4): fleet-wide upgrades that finish what
 * they start. Pure here — the order (a canary first: the first selected host in fleet.yaml's
 * order, or `--canary H`; then the rest in that order), and the sequencer: the canary alone, then
 * the rest at most `concurrency` at a time, and after the first failure nothing more is started:
 * the hosts not started are `skipped`, untouched. The I/O — one host's upgrade (upgrade.ts) — is
 * behind {@link HostUpgrader}, so the sequencing is table-tested without a node.
 */

/** What one host's upgrade settled as, as far as sequencing cares. */
export interface SettledHost<R> {
  readonly host: string;
  /** `ok` goes on (accepted, or already current); anything else stops the run. */
  readonly ok: boolean;
  readonly exitCode: number;
  readonly result: R;
}

/** One host's upgrade: resolves for a failure too (never rejects on a host's failure). */
export type HostUpgrader<R> = (host: string) => Promise<SettledHost<R>>;

export interface UpgradeOrder {
  readonly canary: string | null;
  /** After the canary, in fleet.yaml's order. */
  readonly rest: readonly string[];
}

/**
 * The order of a fleet-wide upgrade (pure): the selected hosts in fleet.yaml's order (each
 * once), the canary first — `canary` when given (it must be selected), else the first. Unknown
 * names are the caller's to refuse (`UNKNOWN_HOST`); here they are an error all the same.
 */
export function upgradeOrder(
  fleetOrder: readonly string[],
  selected: readonly string[] | 'all',
  canary?: string,
): UpgradeOrder {
  const chosen =
    selected === 'all' ? [...fleetOrder] : fleetOrder.filter((host) => selected.includes(host));
  if (selected !== 'all') {
    const unknown = selected.filter((host) => !fleetOrder.includes(host));
    if (unknown.length > 0) throw new Error(`not in fleet.yaml: ${unknown.join(', ')}`);
  }
  if (canary !== undefined && !chosen.includes(canary)) {
    throw new Error(`the canary ${canary} is not one of the hosts to upgrade`);
  }
  const first = canary ?? chosen[0] ?? null;
  return { canary: first, rest: chosen.filter((host) => host !== first) };
}

export interface Sequenced<R> {
  /** Every host of the order, in the order: settled, or `skipped` (never started). */
  readonly hosts: readonly (
    | ({ readonly state: 'settled' } & SettledHost<R>)
    | { readonly state: 'skipped'; readonly host: string }
  )[];
  /** The first host that failed (in settling order), or `null`. */
  readonly stoppedAt: string | null;
}

/**
 * Runs the order: the canary alone; when it is ok, the rest with at most `concurrency` at once,
 * starting none after the first failure (the ones in flight finish: a runtime transaction is the
 * node's and is not cancelled). `onStart`/`onSettled` fire as it goes, in the order things
 * happen.
 */
export async function sequenceUpgrades<R>(
  order: UpgradeOrder,
  concurrency: number,
  upgrade: HostUpgrader<R>,
  events: {
    readonly onStart?: (host: string) => void;
    readonly onSettled?: (settled: SettledHost<R>) => void;
  } = {},
): Promise<Sequenced<R>> {
  const limit = Math.max(1, Math.floor(concurrency));
  const settled = new Map<string, SettledHost<R>>();
  let stoppedAt: string | null = null;
  const run = async (host: string): Promise<void> => {
    events.onStart?.(host);
    const result = await upgrade(host);
    settled.set(host, result);
    events.onSettled?.(result);
    if (!result.ok && stoppedAt === null) stoppedAt = host;
  };
  if (order.canary !== null) await run(order.canary);
  const queue = [...order.rest];
  const worker = async (): Promise<void> => {
    while (stoppedAt === null) {
      const host = queue.shift();
      if (host === undefined) return;
      await run(host);
    }
  };
  if (stoppedAt === null) {
    await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, () => worker()));
  }
  const all = [...(order.canary === null ? [] : [order.canary]), ...order.rest];
  return {
    hosts: all.map((host) => {
      const done = settled.get(host);
      return done ? { state: 'settled' as const, ...done } : { state: 'skipped' as const, host };
    }),
    stoppedAt,
  };
}
