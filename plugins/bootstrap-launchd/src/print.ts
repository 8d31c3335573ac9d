/**
 * `launchctl print gui/<uid>/<label>`, read (pure). Apple calls the output unstable and not for
 * parsing; fleet reads only the service block's own top-level lines — `state`, `pid`, `path`,
 * `last exit code` / `last terminating signal` — and its `arguments` and `environment` blocks, and
 * treats anything it cannot find as unknown rather than guessing.
 */
export interface LaunchctlService {
  /** `running`, `not running`, `waiting`… (`null`: no such line). */
  readonly state: string | null;
  readonly pid: number | null;
  /** The plist launchd loaded the service from. */
  readonly path: string | null;
  /** `last exit code = 1` → 1; `(never exited)` → null. */
  readonly lastExitCode: number | null;
  /** `last terminating signal = Terminated: 15` → `Terminated: 15`. */
  readonly lastSignal: string | null;
  /** The loaded `ProgramArguments` (`arguments = { … }`). */
  readonly arguments: readonly string[];
  /**
   * The loaded environment (`environment = { NAME => value … }`): the plist's
   * `EnvironmentVariables` and what launchd adds (`XPC_SERVICE_NAME`).
   */
  readonly environment: Readonly<Record<string, string>>;
}

export function parsePrint(text: string): LaunchctlService {
  let depth = 0;
  let block: string | null = null;
  const out = {
    state: null as string | null,
    pid: null as number | null,
    path: null as string | null,
    lastExitCode: null as number | null,
    lastSignal: null as string | null,
    arguments: [] as string[],
    environment: {} as Record<string, string>,
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (line === '}') {
      depth -= 1;
      if (depth === 1) block = null;
      continue;
    }
    if (depth === 2 && block === 'arguments') out.arguments.push(line);
    if (depth === 2 && block === 'environment') {
      const pair = /^(\S+) => (.*)$/.exec(line);
      if (pair) out.environment[pair[1] as string] = pair[2] as string;
    }
    const match = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (depth === 1 && match) {
      const key = match[1] as string;
      const value = (match[2] as string).trim();
      if (key === 'state' && !value.endsWith('{')) out.state = value;
      else if (key === 'pid' && /^\d+$/.test(value)) out.pid = Number(value);
      else if (key === 'path') out.path = value;
      else if (key === 'last exit code') {
        const code = /^(-?\d+)/.exec(value);
        out.lastExitCode = code ? Number(code[1]) : null;
      } else if (key === 'last terminating signal') out.lastSignal = value;
      if (value === '{') block = key;
    }
    if (line.endsWith('{')) depth += 1;
  }
  return out;
}
