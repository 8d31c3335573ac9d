/**
 * What `fleet host add` learns about a host before it changes anything (contract §12.1): one POSIX
 * shell script run over SSH, printing `key=value` lines, read here by a pure function, and the
 * problems that stop an enrollment — each with exactly what to run to fix it.
 */
import { compareSemver } from '@fleet/core';
import { nodePlatformOf } from '../release/node-binary.js';
import { CONTROLLER_UNIT, LAUNCHD_LABEL, hostPlatformOf } from './platform.js';

export { CONTROLLER_UNIT } from './platform.js';

/** Node.js releases the runtime runs on (the artifact's engines floor). */
export const NODE_FLOOR = '20.19.0';

export interface HostFacts {
  readonly os: string;
  readonly arch: string;
  readonly user: string;
  readonly uid: number | null;
  readonly home: string;
  readonly node: string | null;
  readonly nodeVersion: string | null;
  readonly tar: boolean;
  readonly systemctl: boolean;
  /** `systemctl --user is-system-running`: running, degraded, starting, … or `absent`. */
  readonly manager: string;
  readonly linger: boolean;
  /** macOS: `launchctl` is on the PATH. */
  readonly launchctl: boolean;
  /**
   * macOS: the exit code of `launchctl print gui/<uid>/dev.fleet.controller` — 0 loaded, 113 not
   * loaded (the domain is there), anything else: the user's `gui` domain cannot be driven (no GUI
   * login), as the bootstrap-launchd adapter's preflight reads it; `null` when not asked.
   */
  readonly launchdPrint: number | null;
  /** The listen port on the listen address: `free`, `EADDRINUSE`, `EADDRNOTAVAIL`, … */
  readonly port: string;
  /** Generations the node holds (their build ids). */
  readonly generations: readonly string[];
  /** Artifacts already uploaded (their sha256). */
  readonly artifacts: readonly string[];
  /** The controller's certificate (PEM), when there is one. */
  readonly certificate: string | null;
  /** The fleet controller runs under its supervisor (unit active, LaunchAgent running). */
  readonly controllerActive: boolean;
  /** sha256 of the node policy file, when there is one. */
  readonly policySha256: string | null;
}

export const CERT_FILE = '.config/fleet/tls/controller-cert.pem';
export const ARTIFACT_CACHE = '.cache/fleet/artifacts';
export const ENROLL_CACHE = '.cache/fleet/enroll';
export const POLICY_FILE = '.config/fleet/node-policy.yaml';

/**
 * The probe script for a controller to listen on `bind`:`port`. It branches on `uname -s`: a Mac
 * is asked about launchd and its runtime layout (`~/Library/Application Support/fleet/`), Linux
 * about `systemd --user`. Only POSIX sh and tools both ship (`sha256sum` or macOS's `shasum`).
 */
export function probeScript(bind: string, port: number): string {
  const listen = `require("net").createServer().once("error",e=>{console.log("port="+e.code)}).listen(${port},${JSON.stringify(bind)},function(){console.log("port=free");this.close()})`;
  const mac = hostPlatformOf('Darwin')?.runtimeDir ?? '';
  const linux = hostPlatformOf('Linux')?.runtimeDir ?? '';
  return [
    'os=$(uname -s)',
    'echo "os=$os"',
    'echo "arch=$(uname -m)"',
    'echo "user=$(id -un)"',
    'echo "uid=$(id -u)"',
    'echo "home=$HOME"',
    'n=$(command -v node 2>/dev/null || true)',
    'echo "node=$n"',
    'if [ -n "$n" ]; then echo "nodeVersion=$("$n" --version 2>/dev/null)"; fi',
    'if command -v tar >/dev/null 2>&1; then echo tar=yes; else echo tar=no; fi',
    `if command -v sha256sum >/dev/null 2>&1; then sum() { sha256sum | cut -d' ' -f1; }; else sum() { shasum -a 256 | cut -d' ' -f1; }; fi`,
    'if [ "$os" = Darwin ]; then',
    `  rt="$HOME/${mac}"`,
    '  if command -v launchctl >/dev/null 2>&1; then',
    '    echo launchctl=yes',
    `    p=$(launchctl print "gui/$(id -u)/${LAUNCHD_LABEL}" 2>/dev/null); echo "launchd=$?"`,
    `    if printf '%s\n' "$p" | grep -q '^[[:space:]]*state = running$'; then echo controller=active; else echo controller=inactive; fi`,
    '  else echo launchctl=no; fi',
    'else',
    `  rt="$HOME/${linux}"`,
    '  if command -v systemctl >/dev/null 2>&1; then echo systemctl=yes; echo "manager=$(systemctl --user is-system-running 2>/dev/null || true)"; else echo systemctl=no; fi',
    '  if [ -e "/var/lib/systemd/linger/$(id -un)" ]; then echo linger=yes; else echo "linger=$(loginctl show-user "$(id -un)" --property=Linger --value 2>/dev/null || echo no)"; fi',
    `  if systemctl --user is-active --quiet ${CONTROLLER_UNIT} 2>/dev/null; then echo controller=active; else echo controller=inactive; fi`,
    'fi',
    `if [ -n "$n" ]; then "$n" -e '${listen}' 2>/dev/null; fi`,
    `for g in "$rt/generations"/*; do [ -d "$g" ] && echo "generation=\${g##*/}"; done 2>/dev/null`,
    `for a in "$HOME/${ARTIFACT_CACHE}"/*.tgz; do [ -f "$a" ] && a=\${a##*/} && echo "artifact=\${a%.tgz}"; done 2>/dev/null`,
    `if [ -f "$HOME/${CERT_FILE}" ]; then echo "certificate=$(base64 -w0 < "$HOME/${CERT_FILE}" 2>/dev/null || base64 < "$HOME/${CERT_FILE}" | tr -d '\\n')"; fi`,
    `if [ -f "$HOME/${POLICY_FILE}" ]; then echo "policy=$(sum < "$HOME/${POLICY_FILE}")"; fi`,
    'exit 0',
  ].join('\n');
}

/** Reads the probe's output (pure). Unknown keys are ignored; a missing one reads as absent. */
export function parseProbe(output: string): HostFacts {
  const values = new Map<string, string[]>();
  for (const line of output.split('\n')) {
    const at = line.indexOf('=');
    if (at <= 0) continue;
    const key = line.slice(0, at);
    values.set(key, [...(values.get(key) ?? []), line.slice(at + 1).trim()]);
  }
  const one = (key: string): string => values.get(key)?.[0] ?? '';
  const uid = Number.parseInt(one('uid'), 10);
  const certificate = one('certificate');
  return {
    os: one('os'),
    arch: one('arch'),
    user: one('user'),
    uid: Number.isInteger(uid) ? uid : null,
    home: one('home'),
    node: one('node') || null,
    nodeVersion: one('nodeVersion').replace(/^v/, '') || null,
    tar: one('tar') === 'yes',
    systemctl: one('systemctl') === 'yes',
    manager: one('manager') || 'absent',
    linger: one('linger') === 'yes',
    launchctl: one('launchctl') === 'yes',
    launchdPrint: /^\d+$/.test(one('launchd')) ? Number(one('launchd')) : null,
    port: one('port') || 'unknown',
    generations: (values.get('generation') ?? []).filter((id) => /^[0-9a-f]{64}$/.test(id)),
    artifacts: (values.get('artifact') ?? []).filter((id) => /^[0-9a-f]{64}$/.test(id)),
    certificate:
      certificate === '' ? null : Buffer.from(certificate, 'base64').toString('utf8') || null,
    controllerActive: one('controller') === 'active',
    policySha256: /^[0-9a-f]{64}$/.test(one('policy')) ? one('policy') : null,
  };
}

/** The host's own Node.js runs fleet: present and at least the floor (pure). */
export function hostNodeUsable(facts: HostFacts): boolean {
  return (
    facts.node !== null &&
    facts.nodeVersion !== null &&
    (compareSemver(facts.nodeVersion, NODE_FLOOR) ?? -1) >= 0
  );
}

/**
 * Why this host cannot be enrolled (pure): one line each, with the command that fixes it. Empty
 * when it can. `listen` names the address and port the controller is to take.
 */
export function enrollmentProblems(
  facts: HostFacts,
  listen: string,
  /** The Node.js the host will run: its own, or the one the release ships for its platform. */
  node: 'host' | 'release' = 'host',
): string[] {
  const problems: string[] = [];
  const platform = hostPlatformOf(facts.os);
  if (platform === null) {
    problems.push(
      `${facts.os || 'an unknown system'}: fleet host add enrolls Linux hosts (systemd --user) and Macs (launchd) so far`,
    );
    return problems;
  }
  if (facts.home === '' || !facts.home.startsWith('/'))
    problems.push('the SSH user has no home directory ($HOME)');
  if (node === 'host' && (facts.node === null || facts.nodeVersion === null)) {
    problems.push(
      `no Node.js on the SSH user's PATH and none in the release for this platform: release with fleet release --confirm --node ${nodePlatformOf(facts.os, facts.arch) ?? 'PLATFORM'}, or install Node.js ${NODE_FLOOR} or later on the host`,
    );
  } else if (node === 'host' && !hostNodeUsable(facts)) {
    problems.push(
      `Node.js ${facts.nodeVersion} at ${facts.node} is older than fleet's floor ${NODE_FLOOR}: install a newer Node.js, or release one with fleet release --confirm --node PLATFORM`,
    );
  }
  if (!facts.tar)
    problems.push(
      `no tar on the PATH (${platform.platform === 'darwin' ? 'macOS ships /usr/bin/tar' : 'apt install tar'})`,
    );
  problems.push(
    ...(platform.platform === 'darwin' ? launchdProblems(facts) : systemdProblems(facts)),
  );
  if (facts.port !== 'free' && !facts.controllerActive) {
    problems.push(
      facts.port === 'EADDRINUSE'
        ? `${listen} is taken by another program on the host: choose another --port`
        : facts.port === 'EADDRNOTAVAIL'
          ? `the host has no address ${listen.replace(/:\d+$/, '')}: give --address one of its own`
          : `cannot tell whether ${listen} is free on the host (${facts.port})`,
    );
  }
  return problems;
}

/** Why `systemd --user` cannot run the controller on this Linux host (pure). */
function systemdProblems(facts: HostFacts): string[] {
  const problems: string[] = [];
  if (!facts.systemctl)
    problems.push('no systemctl: the controller runs under systemd --user (apt install systemd)');
  else if (!['running', 'degraded'].includes(facts.manager)) {
    problems.push(
      `the user's systemd manager is not running (systemctl --user is-system-running: ${facts.manager || 'no answer'}): enable lingering so it runs without a login — sudo loginctl enable-linger ${facts.user || 'USER'}`,
    );
  }
  if (facts.systemctl && !facts.linger) {
    problems.push(
      `lingering is off for ${facts.user || 'the user'}: the controller would stop at logout — run sudo loginctl enable-linger ${facts.user || 'USER'}`,
    );
  }
  return problems;
}

/**
 * Why launchd cannot run the controller as this Mac user's LaunchAgent (pure): the answer of
 * `launchctl print gui/<uid>/dev.fleet.controller` read as the bootstrap-launchd adapter's
 * preflight reads it — 0 (loaded) and 113 (no such service, launchctl(1)) mean the user's `gui`
 * domain is there; anything else means it is not: a LaunchAgent needs the user logged in at the
 * GUI (ADR 0020, "Consequences").
 */
function launchdProblems(facts: HostFacts): string[] {
  if (!facts.launchctl) {
    return [
      'no launchctl on the PATH: the controller runs as a LaunchAgent (macOS ships /bin/launchctl)',
    ];
  }
  if (facts.launchdPrint !== 0 && facts.launchdPrint !== 113) {
    return [
      `launchd's gui/${facts.uid ?? 'UID'} domain cannot be driven (launchctl print answered ${facts.launchdPrint ?? 'nothing'}): a LaunchAgent needs ${facts.user || 'the user'} logged in at the GUI (Fast User Switching keeps the session)`,
    ];
  }
  return [];
}
