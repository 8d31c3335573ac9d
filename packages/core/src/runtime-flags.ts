/**
 * How a node runs its controller: the Node.js options every supervisor (the lab's, a systemd
 * unit's ExecStart, a scheduled task's arguments) puts before `fleet controller serve`. The
 * controller is a long-lived agent that idles between a few small requests: a 1 MiB young
 * generation (instead of V8's 16 MiB semi-spaces) and V8's size-over-speed heuristics keep its
 * resident memory within contract §14's idle-RSS goal at the cost of more, shorter scavenges — nothing a
 * config read notices (export p50 stays under 1 ms on loopback; `npm run bench`).
 *
 * `--no-concurrent-recompilation`: TurboFan optimises on the main thread instead of V8's worker
 * threads. Each worker thread that compiles gets a malloc arena of its own, and the memory of
 * its compilation zones stays resident in it after the burst that caused it: 4–9 MiB of the
 * controller's idle RSS (`/proc/<pid>/smaps`), for a few milliseconds of main-thread compiling
 * during a burst of requests.
 */
export const CONTROLLER_NODE_OPTIONS: readonly string[] = [
  '--max-semi-space-size=1',
  '--optimize-for-size',
  '--no-concurrent-recompilation',
];
