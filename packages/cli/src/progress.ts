/**
 * Progress for fleet-wide verbs, on stderr (stdout stays the report or the JSON document): on a
 * terminal, one line rewritten in place; when stderr is not a terminal, nothing — logs and CI
 * output stay clean.
 */
export class HostProgress {
  private done = 0;
  private readonly counts = new Map<string, number>();
  private readonly enabled: boolean;

  constructor(
    private readonly verb: string,
    private readonly total: number,
    stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.enabled = stream.isTTY === true && total > 1;
    this.stream = stream;
  }

  private readonly stream: NodeJS.WriteStream;

  /** Records one settled host with its status and redraws the line. */
  settled(status: string): void {
    this.done += 1;
    this.counts.set(status, (this.counts.get(status) ?? 0) + 1);
    if (!this.enabled) return;
    const parts = [...this.counts].map(([name, count]) => `${count} ${name}`).join(', ');
    this.stream.write(`\r\x1b[2K${this.verb}: ${this.done}/${this.total} hosts (${parts})`);
  }

  /** Clears the line. */
  finish(): void {
    if (this.enabled) this.stream.write('\r\x1b[2K');
  }
}

// The progress that names the hosts a verb still waits for is core's, shared with plugin
// commands (`@fleet/core/command`).
export { WaitingProgress } from '@fleet/core/command';
