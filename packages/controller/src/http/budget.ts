/**
 * Connection budgets (contract §15, catalogue 10): unauthenticated load must not starve
 * authenticated clients. A connection is *unauthenticated* from accept until a request on it
 * authenticates; then it moves to the *authenticated* budget, which unauthenticated connections
 * can never use up.
 *
 * The unauthenticated budget is shared by all remote addresses, each with a fair share: when it is
 * full, a new connection makes room by closing the oldest idle (no request in progress)
 * unauthenticated connection of the address holding the most — if that address holds more than
 * its share — and is refused (503) otherwise. So 260 slowloris sockets from one address cost that
 * address its own oldest sockets, never another client's, and a real client from the same
 * address still gets in (its fresh connection is the newest, the last to be closed).
 *
 * Pure bookkeeping over opaque connection handles; the server wires it to sockets (controller.ts).
 */

export interface BudgetLimits {
  /** Authenticated connections at once. */
  readonly authenticated: number;
  /** Unauthenticated connections at once, all addresses together. */
  readonly unauthenticated: number;
  /** An address's share of the unauthenticated budget. */
  readonly perAddress: number;
}

export type Admission<C> =
  { readonly admitted: true; readonly evict: C | null } | { readonly admitted: false };

interface Entry {
  readonly address: string;
  readonly since: number;
  authenticated: boolean;
  /** A request is being read or answered on it (never closed to make room). */
  busy: boolean;
}

export class ConnectionBudget<C> {
  private readonly entries = new Map<C, Entry>();
  private readonly byAddress = new Map<string, Set<C>>();
  private unauthenticated = 0;
  private authenticated = 0;
  private clock = 0;

  constructor(private readonly limits: BudgetLimits) {}

  /** A new connection: admitted (perhaps closing another to make room), or refused. */
  open(connection: C, address: string): Admission<C> {
    let evict: C | null = null;
    if (this.unauthenticated >= this.limits.unauthenticated) {
      evict = this.victim();
      if (evict === null) return { admitted: false };
      this.close(evict);
    }
    this.entries.set(connection, {
      address,
      since: (this.clock += 1),
      authenticated: false,
      busy: false,
    });
    let set = this.byAddress.get(address);
    if (set === undefined) this.byAddress.set(address, (set = new Set()));
    set.add(connection);
    this.unauthenticated += 1;
    return { admitted: true, evict };
  }

  /** A request started (`true`) or finished (`false`) on the connection. */
  busy(connection: C, busy: boolean): void {
    const entry = this.entries.get(connection);
    if (entry) entry.busy = busy;
  }

  /** A request authenticated on it: moved to the authenticated budget; `false` when that is full. */
  authenticate(connection: C): boolean {
    const entry = this.entries.get(connection);
    if (entry === undefined) return true; // not tracked (closed meanwhile): nothing to count
    if (entry.authenticated) return true;
    if (this.authenticated >= this.limits.authenticated) return false;
    entry.authenticated = true;
    this.authenticated += 1;
    this.unauthenticated -= 1;
    this.byAddress.get(entry.address)?.delete(connection);
    return true;
  }

  close(connection: C): void {
    const entry = this.entries.get(connection);
    if (entry === undefined) return;
    this.entries.delete(connection);
    if (entry.authenticated) {
      this.authenticated -= 1;
      return;
    }
    this.unauthenticated -= 1;
    const set = this.byAddress.get(entry.address);
    set?.delete(connection);
    if (set?.size === 0) this.byAddress.delete(entry.address);
  }

  counts(): { authenticated: number; unauthenticated: number } {
    return { authenticated: this.authenticated, unauthenticated: this.unauthenticated };
  }

  /** The oldest idle connection of the heaviest address, if that address is over its share. */
  private victim(): C | null {
    let heaviest: Set<C> | undefined;
    for (const set of this.byAddress.values()) {
      if (heaviest === undefined || set.size > heaviest.size) heaviest = set;
    }
    if (heaviest === undefined || heaviest.size <= this.limits.perAddress) return null;
    let oldest: { connection: C; since: number } | null = null;
    for (const connection of heaviest) {
      const entry = this.entries.get(connection) as Entry;
      if (entry.busy) continue;
      if (oldest === null || entry.since < oldest.since)
        oldest = { connection, since: entry.since };
    }
    return oldest?.connection ?? null;
  }
}
