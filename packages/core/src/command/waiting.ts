/**
 * Progress that names whom a verb over many hosts still waits for (contract §7; `fleet drift`,
 * `apply`, `status`, `harness reconcile`): after a second, and every two seconds while hosts are
 * outstanding, one line on stderr — `status: waiting for node-03, node-07 (8/10 answered)` — on a
 * terminal rewritten in place, otherwise a line each time (a log shows which host held the run
 * up). Nothing at all when every host answers within the first second.
 */
export class WaitingProgress {
  private readonly pending: Set<string>;
  private readonly tty: boolean;
  private readonly first: NodeJS.Timeout;
  private interval: NodeJS.Timeout | undefined;
  private drawn = false;

  constructor(
    private readonly verb: string,
    private readonly hosts: readonly string[],
    private readonly stream: NodeJS.WriteStream = process.stderr,
    firstMs = 1_000,
    everyMs = 2_000,
    /** What a host that is done did: `answered` (a read), `settled` (a reconcile). */
    private readonly done: string = 'answered',
  ) {
    this.pending = new Set(hosts);
    this.tty = stream.isTTY === true;
    this.first = setTimeout(() => {
      this.draw();
      this.interval = setInterval(() => this.draw(), everyMs);
      this.interval.unref();
    }, firstMs);
    this.first.unref();
  }

  settled(host: string): void {
    this.pending.delete(host);
  }

  private draw(): void {
    if (this.pending.size === 0) return;
    const names = [...this.pending];
    const shown =
      names.slice(0, 8).join(', ') + (names.length > 8 ? `, … (${names.length - 8} more)` : '');
    const line = `${this.verb}: waiting for ${shown} (${this.hosts.length - this.pending.size}/${this.hosts.length} ${this.done})`;
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(`${line}\n`);
    this.drawn = true;
  }

  /** Clears the line drawn on a terminal, so a result printed on stdout starts clean. */
  clear(): void {
    if (this.tty && this.drawn) this.stream.write('\r\x1b[2K');
  }

  finish(): void {
    clearTimeout(this.first);
    if (this.interval) clearInterval(this.interval);
    this.clear();
  }
}
