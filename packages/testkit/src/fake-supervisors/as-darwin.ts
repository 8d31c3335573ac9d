/**
 * Loaded with `node --import` into a process that must run fleet's macOS code paths on this
 * Linux machine (docs/adr/0022-a-mac-node-in-tests-is-a-process-that-reports-darwin.md): from
 * here on `process.platform` (and `os.platform()`, which reads it) is `darwin`, so the real
 * controller, runner and receiver choose the Mac layout and the launchd adapter exactly as they do
 * on a Mac. Nothing in fleet reads a switch for this: the seam is the operating system's answer,
 * changed only in processes a test starts (the fake launchd's jobs, a test's SSH login).
 *
 * Node's own modules picked their platform when it started (path, fs, child_process stay
 * Linux's): only code that asks afterwards — fleet's — sees a Mac.
 */
Object.defineProperty(process, 'platform', {
  value: 'darwin',
  enumerable: true,
  configurable: true,
  writable: false,
});
export {};
