/**
 * The outcome of one coupled action, for the receipt. Its own module, importing nothing: a thrown
 * `FleetError` carries the actions that ran before it (`errors.ts`), and the installer contract
 * reports them, so both import it from here.
 */
export interface ActionOutcome {
  /** The action's kind, as the coupling declares it. */
  readonly kind: string;
  /** `pending`: settled after the answer, by the restarted controller (see `PendingRestart`). */
  readonly status: 'ok' | 'skipped' | 'failed' | 'rolled-back' | 'pending';
  /** One line: what happened. */
  readonly detail: string;
}
