// Loaded by mocha before any test (.mocharc.json): a test run must end by itself, without
// `--exit`. A test that leaves a timer, a server, a socket or a child process running would hold
// the process open after mocha's summary (one idle timer of a minute each is enough), so after the
// last test this waits a few seconds for the event loop to drain and, if something a test made
// still keeps it alive, fails the run with one line per leftover — its kind, what it is, and the
// test file that made it — then lets go of it, so that the run ends instead of hanging.
//
// Timers are named by wrapping the global setTimeout and setInterval (cheap: a WeakRef per call);
// async_hooks would name everything but slows every promise more than tenfold. Servers, sockets
// and child processes are described from process._getActiveHandles().

const DRAIN_MS = Number(process.env.FLEET_TEST_DRAIN_MS ?? 5000);

/**
 * The test file running now (set before each test), and whether we are between two tests, where
 * a timer belongs to the hooks of the file before or of the file after.
 */
let runningFile = '(before the first test)';
let betweenTests = false;
/** Timers made between two tests, waiting to learn the file of the next one. */
let pendingGap = [];
const timers = new Set(); // { ref: WeakRef<Timeout>, madeIn: () => string, name, ms }

function madeInNow() {
  const file = runningFile;
  if (!betweenTests) return () => file;
  // A later hook of this file (`afterEach`, `after`) or a hook of the next one (`before`).
  const marker = { next: undefined };
  pendingGap.push(marker);
  return () => {
    if (marker.next === undefined) return `${file} (after its last test)`;
    if (marker.next === file) return file;
    return `${file} (after its last test) or ${marker.next} (before its first)`;
  };
}

function wrapTimer(original) {
  return function wrapped(callback, ...rest) {
    const timer = original.call(this, callback, ...rest);
    if (timer !== null && typeof timer === 'object') {
      timers.add({
        ref: new WeakRef(timer),
        madeIn: madeInNow(),
        name: (typeof callback === 'function' && callback.name) || 'an anonymous callback',
        ms: Number(rest[0] ?? 0),
      });
      if (timers.size > 20000) prune();
    }
    return timer;
  };
}

/** Whether a timer still keeps the loop alive: not fired (one-shot), not cleared, referenced. */
function live(timer) {
  return timer !== undefined && timer._destroyed !== true && timer.hasRef();
}

function prune() {
  for (const entry of timers) if (!live(entry.ref.deref())) timers.delete(entry);
}

globalThis.setTimeout = wrapTimer(globalThis.setTimeout);
globalThis.setInterval = wrapTimer(globalThis.setInterval);

function describeHandle(handle) {
  const kind = handle?.constructor?.name ?? typeof handle;
  if (kind === 'ChildProcess') return `child process ${handle.pid}: ${handle.spawnargs?.join(' ')}`;
  if (kind === 'Server') {
    const address = handle.address();
    return `server listening on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`;
  }
  if (kind === 'Socket') {
    if (handle.remoteAddress !== undefined)
      return `socket to ${handle.remoteAddress}:${handle.remotePort}`;
    return handle._handle?.fd <= 2 ? undefined : 'a socket or pipe';
  }
  return kind;
}

/** The stdio pipes and the like that were there before any test: not a test's doing. */
const handlesAtStart = new Set(process._getActiveHandles());

function leftovers() {
  const found = [];
  for (const entry of timers) {
    const timer = entry.ref.deref();
    if (!live(timer)) continue;
    found.push({
      line: `timer (${entry.ms} ms, ${entry.name}) made in ${entry.madeIn()}`,
      release: () => timer.unref(),
    });
  }
  for (const handle of process._getActiveHandles()) {
    if (handlesAtStart.has(handle)) continue;
    if (typeof handle.hasRef === 'function' && !handle.hasRef()) continue;
    const what = describeHandle(handle);
    if (what === undefined) continue;
    found.push({ line: what, release: () => handle.unref?.() });
  }
  return found;
}

export const mochaHooks = {
  beforeEach() {
    runningFile = this.currentTest?.file ?? runningFile;
    for (const marker of pendingGap) marker.next = runningFile;
    pendingGap = [];
    betweenTests = false;
  },
  afterEach() {
    betweenTests = true; // until the next test's beforeEach
  },
  async afterAll() {
    this.timeout(DRAIN_MS + 5000);
    const until = Date.now() + DRAIN_MS;
    let found = leftovers();
    while (found.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => {
        const tick = setTimeout(resolve, 100);
        tick.unref();
      });
      found = leftovers();
    }
    if (found.length === 0) return;
    for (const leftover of found) leftover.release();
    throw new Error(
      `the tests left ${found.length} thing(s) keeping the process alive ${DRAIN_MS} ms after the last test ` +
        `(released now so that the run ends):\n  ${found.map((leftover) => leftover.line).join('\n  ')}`,
    );
  },
};
