/**
 * Progress that names the hosts a reconcile still waits for, on stderr (contract §7), as the CLI's
 * `fleet drift` and `fleet apply` show it: after a second, and every two seconds while hosts are
 * outstanding, `harness reconcile: waiting for node-03 (2/3 settled)` — on a terminal one line
 * rewritten in place, otherwise a line each time (a log shows which host held the run up).
 * Nothing when every host settles within the first second. (The same behaviour as the CLI's
 * `WaitingProgress`; a plugin does not import the CLI.)
 */
export class WaitingLine {
  private readonly pending: Set<string>;
  private readonly tty: boolean;
  private readonly first: NodeJS.Timeout;
  private interval: NodeJS.Timeout | undefined;
  private drawn = false;

  constructor(
    private readonly verb: string,
    private readonly hosts: readonly string[],
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.pending = new Set(hosts);
    this.tty = stream.isTTY === true;
    this.first = setTimeout(() => {
      this.draw();
      this.interval = setInterval(() => this.draw(), 2_000);
      this.interval.unref();
    }, 1_000);
    this.first.unref();
  }

  settled(host: string): void {
    this.pending.delete(host);
  }

  /** Clears the line drawn on a terminal, so a host's lines on stdout start clean. */
  clear(): void {
    if (this.tty && this.drawn) this.stream.write('\r\x1b[2K');
  }

  private draw(): void {
    if (this.pending.size === 0) return;
    const names = [...this.pending];
    const shown =
      names.slice(0, 8).join(', ') + (names.length > 8 ? `, … (${names.length - 8} more)` : '');
    const line = `${this.verb}: waiting for ${shown} (${this.hosts.length - this.pending.size}/${this.hosts.length} settled)`;
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(`${line}\n`);
    this.drawn = true;
  }

  finish(): void {
    clearTimeout(this.first);
    if (this.interval) clearInterval(this.interval);
    this.clear();
  }
}
