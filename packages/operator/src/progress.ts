/**
 * The progress a command shows while a service works on several hosts (core's `WaitingProgress`
 * on a terminal: the hosts still waited for, or a count). The service tells it each host as it
 * settles and when the run is over; apply, drift, status and audit verify report to it.
 */
export interface HostsProgress {
  /** One host settled; `label` is what the command's progress names it by (host or status). */
  settled(label: string): void;
  finish(): void;
}
