/**
 * Where everything of a lab lives (contract §13). Scripts and tests rely on this layout, so it is
 * written down once, here:
 *
 *   DIR/lab.json                       { repo, credentials, hosts: [{ name, home, controller, pid }] }
 *   DIR/repo/                          the fleet repository (FLEET_REPO)
 *   DIR/credentials.json               per-host tokens (FLEET_CREDENTIALS), mode 0600
 *   DIR/nodes/<host>/home/             the node's home ("~" for that node)
 *   DIR/nodes/<host>/supervisor.json   the supervisor's record: flags, controller pid, state
 *   DIR/nodes/<host>/supervisor.sock   its control socket (FLEET_LAB_SUPERVISOR)
 *   DIR/nodes/<host>/supervisor.log    the supervisor's and its controller's output
 *   DIR/nodes/virtual.log              the one process of a --virtual lab
 */
import { join } from 'node:path';

export const LAB_FILE = 'lab.json';
export const DEFAULT_LAB_DIR = '.fleet-lab';
export const DEFAULT_HOSTS = 3;
/** Real processes cost ~100 MiB a node: beyond this, --virtual. */
export const MAX_REAL_HOSTS = 64;
export const MAX_VIRTUAL_HOSTS = 5000;

export interface LabLayout {
  readonly dir: string;
  readonly labFile: string;
  readonly repo: string;
  readonly credentials: string;
  readonly nodes: string;
  readonly virtualLog: string;
}

export interface NodeLayout {
  readonly host: string;
  readonly dir: string;
  readonly home: string;
  readonly state: string;
  readonly socket: string;
  readonly log: string;
}

/** `dir` must already be absolute and real (see `realLabDir`): pids are matched against it. */
export function labLayout(dir: string): LabLayout {
  const nodes = join(dir, 'nodes');
  return {
    dir,
    labFile: join(dir, LAB_FILE),
    repo: join(dir, 'repo'),
    credentials: join(dir, 'credentials.json'),
    nodes,
    virtualLog: join(nodes, 'virtual.log'),
  };
}

export function nodeLayout(lab: LabLayout, host: string): NodeLayout {
  const dir = join(lab.nodes, host);
  return {
    host,
    dir,
    home: join(dir, 'home'),
    state: join(dir, 'supervisor.json'),
    socket: join(dir, 'supervisor.sock'),
    log: join(dir, 'supervisor.log'),
  };
}

/**
 * `node-01`, `node-02`, … `node-99`, `node-100`: host i has the same name whatever the lab's size,
 * so growing a lab never renames a host.
 */
export function hostNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `node-${String(i + 1).padStart(2, '0')}`);
}

// A unix socket path is limited to 108 bytes on Linux (104 on macOS), including the NUL.
export const MAX_SOCKET_PATH = 103;
