/**
 * The fakes' model of a systemd control group and of a Task Scheduler job object: every process
 * a run's monitor started, and every process those started, whatever they did to get away — a new
 * session (`setsid`, `detached: true`) or a parent that exited (a double fork) changes nothing, as
 * neither leaves a cgroup or a job object. Stopping a unit (`systemctl stop|restart`, the main
 * process ending) or ending a task (`schtasks /End`) ends the whole group, as the real ones do.
 *
 * The group is read from /proc: the monitor's descendants by parent pid, plus every member the
 * monitor has seen before (it looks every 50 ms and records each by pid and start time, so a
 * process whose parent exited stays a member — as in a cgroup). A process that another run's
 * monitor started (`systemd-run`, another task's `/Run`) is that run's, not this one's: leaving the
 * group takes what the real systems take, a unit or a task of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readJson, writeJson } from './common.js';

export interface Member {
  readonly pid: number;
  /** `starttime` of /proc/<pid>/stat: a recycled pid is another process. */
  readonly start: string;
}

interface Stat {
  readonly ppid: number;
  /** The process group id. */
  readonly pgrp: number;
  readonly start: string;
  readonly zombie: boolean;
}

/** Every process of the machine: pid → parent, start time, zombie. */
export function processTable(): Map<number, Stat> {
  const table = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    //  cutime cstime priority nice threads itrealvalue starttime …"
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    table.set(Number(name), {
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      start: fields[19] ?? '',
      zombie: fields[0] === 'Z',
    });
  }
  return table;
}

/** `root` and everything below it, by parent pid. */
export function descendants(table: ReadonlyMap<number, Stat>, root: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const [pid, stat] of table) {
    const list = children.get(stat.ppid) ?? [];
    list.push(pid);
    children.set(stat.ppid, list);
  }
  const found = new Set<number>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    if (found.has(pid) || !table.has(pid)) continue;
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

const membersPath = (dir: string, key: string) => `${dir}/runs/${key}.members.json`;

/** The members recorded so far (by the monitor of `key`). */
export function recordedMembers(dir: string, key: string): Member[] {
  return readJson<Member[]>(membersPath(dir, key), []);
}

/** The monitors of every other run in `dir` (their groups are theirs). */
function otherMonitors(dir: string, key: string): number[] {
  let names: string[];
  try {
    names = readdirSync(`${dir}/runs`);
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || name.endsWith('.spec.json') || name.endsWith('.members.json'))
      continue;
    if (name === `${key}.json`) continue;
    const record = readJson<{ monitorPid?: number; state?: string } | null>(
      `${dir}/runs/${name}`,
      null,
    );
    if (record?.monitorPid && record.state !== 'exited') pids.push(record.monitorPid);
  }
  return pids;
}

/**
 * The live members of run `key`'s group (its monitor excluded): the monitor's descendants and the
 * members it recorded, minus what belongs to another run's group.
 */
export function groupMembers(dir: string, key: string, monitorPid: number): number[] {
  const table = processTable();
  const mine = descendants(table, monitorPid);
  for (const member of recordedMembers(dir, key)) {
    const stat = table.get(member.pid);
    if (stat && stat.start === member.start) mine.add(member.pid);
  }
  for (const other of otherMonitors(dir, key)) {
    for (const pid of descendants(table, other)) mine.delete(pid);
  }
  mine.delete(monitorPid);
  return [...mine].filter((pid) => !table.get(pid)?.zombie);
}

/** The monitor's side: adds its current descendants to the recorded members (dead ones pruned). */
export function recordMembers(dir: string, key: string, monitorPid: number): void {
  const table = processTable();
  const known = recordedMembers(dir, key).filter(
    (member) => table.get(member.pid)?.start === member.start,
  );
  const seen = new Set(known.map((member) => member.pid));
  let changed = known.length !== recordedMembers(dir, key).length;
  for (const pid of descendants(table, monitorPid)) {
    if (pid === monitorPid || seen.has(pid)) continue;
    const stat = table.get(pid);
    if (!stat || stat.zombie) continue;
    known.push({ pid, start: stat.start });
    changed = true;
  }
  if (!changed) return;
  try {
    writeJson(membersPath(dir, key), known, { createDirectory: false });
  } catch (error) {
    // The state directory is gone: the monitor notices and ends the group (monitor.ts).
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * The live members of run `key`'s group that are in process group `leader` (launchd's unit of
 * clean-up, launchd.plist(5) `AbandonProcessGroup`): a member that made a process group or session
 * of its own is not among them.
 */
export function processGroupMembers(
  dir: string,
  key: string,
  monitorPid: number,
  leader: number,
): number[] {
  const table = processTable();
  return groupMembers(dir, key, monitorPid).filter((pid) => table.get(pid)?.pgrp === leader);
}

/** Signals every live member of the group; returns how many there were. */
export function signalGroup(
  dir: string,
  key: string,
  monitorPid: number,
  signal: NodeJS.Signals,
): number {
  const members = groupMembers(dir, key, monitorPid);
  for (const pid of members) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone between the read and the signal
    }
  }
  return members.length;
}
