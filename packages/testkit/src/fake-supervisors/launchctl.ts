/**
 * A fake `launchctl` (see README.md, "Fake supervisors"): the user's `gui/<uid>` domain of launchd,
 * with the property lists read by a real plist parser (plist-file.ts) and the jobs' processes
 * really started and ended (launchd-domain.ts, the domain these commands act on). Exactly these
 * forms (launchctl(1), "SUBCOMMANDS"):
 *
 *   launchctl bootstrap gui/<uid> PATH…
 *   launchctl bootout gui/<uid>/LABEL | launchctl bootout gui/<uid> PATH…
 *   launchctl kickstart [-k] [-p] gui/<uid>/LABEL
 *   launchctl print gui/<uid>/LABEL
 *   launchctl setenv KEY VALUE | launchctl unsetenv KEY | launchctl getenv KEY
 *
 * Anything else — another domain (`system`, `user/<uid>`, another user's uid), the legacy
 * `load`/`unload`/`submit` — exits non-zero. What launchd does, and the fake with it:
 *
 * - `bootstrap` reads the plist *then*: a file changed later changes nothing until the service is
 *   booted out and bootstrapped again (there is no reload). A second `bootstrap` of a label that
 *   is loaded fails with `Bootstrap failed: 5: Input/output error` and exit 5 (macOS 11 and
 *   later; earlier releases said `37: Operation already in progress`). A plist writable by group
 *   or others is refused (launchd: "dubious ownership/permissions"). `RunAtLoad`, and `KeepAlive`
 *   true or a dictionary ("This key implies that RunAtLoad is set to true", launchd.plist(5)),
 *   start the job at once. Without a GUI login the `gui` domain does not exist (fault
 *   `no-gui-session`: `Bootstrap failed: 125: Domain does not support specified action`).
 * - A job's process leads a process group of its own. "When a job dies, launchd kills any
 *   remaining processes with the same process group ID as the job. Setting [AbandonProcessGroup]
 *   to true disables that behavior" (launchd.plist(5)); a child that made its own session is not
 *   in that group and lives on.
 * - `kickstart -k`: "If the service is already running, kill the running instance before
 *   restarting the service" (launchctl(1)): SIGTERM, SIGKILL after `ExitTimeOut` seconds, and the
 *   job's process group with it unless `AbandonProcessGroup`. Without `-k` a running job is left
 *   alone. `-p` prints the new pid.
 * - `bootout` stops and unloads the service: every process the job started goes, whatever
 *   process group or session it made (launchd tracks a job's processes, not only its group —
 *   the fake is at least that strict), so a process that must outlive it runs as a job of its own.
 * - Jobs get launchd's environment, not the caller's: `PATH=/usr/bin:/bin:/usr/sbin:/sbin`
 *   (the user domain's default; a test changes it with `FakeSupervisorHost.setLaunchdPath`, as
 *   `launchctl config user path` does on a Mac), `HOME`, `USER`, `LOGNAME`, `SHELL`, `TMPDIR`,
 *   `XPC_SERVICE_NAME`, and the plist's `EnvironmentVariables` — no `FLEET_*` of the caller's.
 * - A job whose `WorkingDirectory`, or the directory of its `StandardOutPath`/`StandardErrorPath`,
 *   does not exist, or whose program cannot be executed, does not run: `last exit code = 78:
 *   EX_CONFIG` (launchd does not create directories).
 * - `setenv`/`getenv` (launchctl(1): "setenv key value: Sets an environment variable for all
 *   services within the domain"; "getenv key: Prints the value of an environment variable that
 *   launchd would set for all processes launched in the caller's domain"): a value set is
 *   printed with a newline and given to every job started afterwards (before its plist's
 *   `EnvironmentVariables`); an unset one prints nothing, exit 0.
 * - `print` answers in the shape of macOS 14's `launchctl print` (the fields fleet reads —
 *   `state`, `pid`, `last exit code` — at the top level of the service's block); an unknown
 *   service is `Could not find service "LABEL" in domain for user gui: UID`, exit 113.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { activeFaults, fail, logCall, ok, writeJson, type CliResult, type Env } from './common.js';
import {
  domainEnv,
  EX_CONFIG,
  jobEnv,
  killJob,
  LAUNCHD_DEFAULT_PATH,
  launchdDir,
  launchdRunKey,
  load,
  save,
  startJob,
  type Service,
} from './launchd-domain.js';
import { readLaunchdJob, type LaunchdJob } from './launchd-job.js';
import { parsePlist, PlistError } from './plist-file.js';
import { isRunning, readRun, stopRun, type RunRecord } from './runs.js';

const uid = (): number => process.getuid?.() ?? 0;
const notFound = (label: string): CliResult =>
  fail(113, `Bad request.\nCould not find service "${label}" in domain for user gui: ${uid()}`);

/** `gui/<uid>` or `gui/<uid>/<label>`; anything else is refused. */
function target(text: string | undefined): { label: string | null } | CliResult {
  const match = /^gui\/(\d+)(?:\/(.+))?$/.exec(text ?? '');
  if (!match)
    return fail(
      1,
      `fake launchctl: ${JSON.stringify(text ?? '')} is not gui/<uid>[/<label>] (the fake models the user's gui domain only)`,
    );
  if (Number(match[1]) !== uid()) {
    // Another user's domain: only root may change it (launchctl(1), "gui/<uid>").
    return fail(1, `Bootstrap failed: 1: Operation not permitted`);
  }
  return { label: match[2] ?? null };
}

async function bootstrap(env: Env, paths: string[]): Promise<CliResult> {
  if (paths.length === 0)
    return fail(
      64,
      'Usage: launchctl bootstrap <domain-target> [service-path, service-path2, ...]',
    );
  const state = load(env);
  for (const given of paths) {
    const path = resolve(given);
    let job: LaunchdJob;
    let text: string;
    try {
      const stat = statSync(path);
      if ((stat.mode & 0o022) !== 0)
        throw new PlistError('the plist is writable by group or others (dubious permissions)');
      text = readFileSync(path, 'utf8');
      job = readLaunchdJob(parsePlist(text));
    } catch (error) {
      const why =
        error instanceof PlistError
          ? error.message
          : ((error as NodeJS.ErrnoException).code ?? String(error));
      // launchd says only "5: Input/output error" and logs the reason; the fake adds it.
      return fail(5, `Bootstrap failed: 5: Input/output error\nfake launchctl: ${path}: ${why}`);
    }
    const loaded = state.services[job.label];
    if (loaded !== undefined) {
      return fail(
        5,
        'Bootstrap failed: 5: Input/output error\nTry re-running the command as root for richer errors.',
      );
    }
    const service: Service = {
      label: job.label,
      path,
      plist: text,
      bootstrappedAt: new Date().toISOString(),
    };
    state.services[job.label] = service;
    save(env, state);
    if (job.runAtLoad || job.keepAlive !== 'no') await startJob(env, state, service);
  }
  return ok();
}

async function bootout(env: Env, label: string | null, paths: string[]): Promise<CliResult> {
  const state = load(env);
  const labels: string[] = [];
  if (label !== null) labels.push(label);
  for (const given of paths) {
    const found = Object.values(state.services).find((s) => s.path === resolve(given));
    if (found) labels.push(found.label);
  }
  const services = labels.map((name) => state.services[name]).filter((s): s is Service => !!s);
  if (services.length === 0) return fail(3, 'Boot-out failed: 3: No such process');
  for (const service of services) {
    await killJob(env, service);
    // Every process the job started, whatever group or session it made (see the file comment).
    await stopRun(launchdDir(env), launchdRunKey(service.label), 5_000);
    delete state.services[service.label];
  }
  save(env, state);
  return ok();
}

async function kickstart(env: Env, args: string[]): Promise<CliResult> {
  let kill = false;
  let printPid = false;
  const rest: string[] = [];
  for (const arg of args) {
    if (arg === '-k') kill = true;
    else if (arg === '-p') printPid = true;
    else if (arg.startsWith('-'))
      return fail(64, `fake launchctl: kickstart option ${arg} is not modelled`);
    else rest.push(arg);
  }
  if (rest.length !== 1) return fail(64, 'Usage: launchctl kickstart [-kp] <service-target>');
  const parsed = target(rest[0]);
  if ('code' in parsed) return parsed;
  if (parsed.label === null) return fail(64, 'Usage: launchctl kickstart [-kp] <service-target>');
  const state = load(env);
  const service = state.services[parsed.label];
  if (service === undefined) return notFound(parsed.label);
  const key = launchdRunKey(service.label);
  let run = readRun(launchdDir(env), key);
  if (isRunning(run) && !kill) return ok(printPid ? `${run?.pid ?? ''}\n` : '');
  if (isRunning(run)) await killJob(env, service);
  run = await startJob(env, state, service);
  return ok(printPid && run?.pid ? `${run.pid}\n` : '');
}

const signalNames: Record<string, string> = {
  SIGTERM: 'Terminated: 15',
  SIGKILL: 'Killed: 9',
  SIGINT: 'Interrupt: 2',
  SIGHUP: 'Hangup: 1',
};

function lastExitLine(service: Service, run: RunRecord | null): string {
  if (service.spawnFailed) return `last exit code = ${EX_CONFIG}: EX_CONFIG`;
  if (run === null || (run.endedAt === null && run.restarts === 0 && (run.runs ?? 1) === 1))
    return 'last exit code = (never exited)';
  if (run.signal) return `last terminating signal = ${signalNames[run.signal] ?? run.signal}`;
  if (run.exitCode === null) return 'last exit code = (never exited)';
  return `last exit code = ${run.exitCode}${run.exitCode === EX_CONFIG ? ': EX_CONFIG' : ''}`;
}

function print(env: Env, label: string): CliResult {
  const state = load(env);
  const service = state.services[label];
  if (service === undefined) return notFound(label);
  const job = readLaunchdJob(parsePlist(service.plist));
  const run = readRun(launchdDir(env), launchdRunKey(label));
  const running = isRunning(run) && run?.state === 'running' && run.pid !== null;
  const environment = jobEnv(env, job);
  const properties = [
    job.keepAlive !== 'no' ? 'keepalive' : null,
    job.runAtLoad ? 'runatload' : null,
    job.abandonProcessGroup ? 'abandon process group' : null,
  ].filter(Boolean);
  const lines = [
    `gui/${uid()}/${label} = {`,
    `\tactive count = ${running ? 1 : 0}`,
    `\tpath = ${service.path}`,
    '\ttype = LaunchAgent',
    `\tstate = ${running ? 'running' : 'not running'}`,
    '',
    `\tprogram = ${job.program}`,
    '\targuments = {',
    ...job.argv.map((arg) => `\t\t${arg}`),
    '\t}',
    '',
    ...(job.workingDirectory ? [`\tworking directory = ${job.workingDirectory}`, ''] : []),
    ...(job.stdoutPath ? [`\tstdout path = ${job.stdoutPath}`] : []),
    ...(job.stderrPath ? [`\tstderr path = ${job.stderrPath}`] : []),
    '\tdefault environment = {',
    `\t\tPATH => ${environment['PATH'] ?? LAUNCHD_DEFAULT_PATH}`,
    '\t}',
    '',
    '\tenvironment = {',
    ...Object.entries(job.environment).map(([k, v]) => `\t\t${k} => ${v}`),
    `\t\tXPC_SERVICE_NAME => ${label}`,
    '\t}',
    '',
    `\tdomain = gui/${uid()} [100008]`,
    '\tasid = 100008',
    '\tminimum runtime = 10',
    `\texit timeout = ${job.exitTimeout}`,
    ...(job.startInterval !== null ? [`\trun interval = ${job.startInterval} seconds`] : []),
    `\truns = ${run === null ? 0 : run.restarts + (run.runs ?? 1)}`,
    ...(running ? [`\tpid = ${run?.pid}`] : []),
    `\timmediate reason = ${running ? 'speculative' : 'inefficient'}`,
    '\tforks = 0',
    `\texecs = ${run === null ? 0 : 1}`,
    '\tinitialized = 1',
    '\ttrampolined = 1',
    '\tstarted suspended = 0',
    '\tproxy started suspended = 0',
    `\t${lastExitLine(service, run)}`,
    '',
    `\tspawn type = ${job.processType === 'Interactive' ? 'interactive (4)' : job.processType === 'Background' ? 'background (2)' : 'daemon (3)'}`,
    `\tjetsam priority = ${job.processType === 'Interactive' ? 180 : 40}`,
    ...(properties.length ? [`\tproperties = ${properties.join(' | ')}`] : []),
    '}',
    '',
  ];
  return ok(lines.join('\n'));
}

export async function launchctl(argv: string[], env: Env): Promise<CliResult> {
  logCall(launchdDir(env), ['launchctl', ...argv]);
  const [verb, ...rest] = argv;
  if (
    activeFaults(env).has('no-gui-session') &&
    /^(bootstrap|bootout|kickstart|print)$/.test(verb ?? '')
  ) {
    // No GUI login: the gui/<uid> domain does not exist for any subcommand.
    return fail(
      125,
      `${verb === 'print' ? 'Print' : verb === 'bootout' ? 'Boot-out' : verb === 'kickstart' ? 'Kickstart' : 'Bootstrap'} failed: 125: Domain does not support specified action`,
    );
  }
  switch (verb) {
    case 'bootstrap': {
      const parsed = target(rest[0]);
      if ('code' in parsed) return parsed;
      if (parsed.label !== null)
        return fail(64, 'Usage: launchctl bootstrap <domain-target> <paths…>');
      return bootstrap(env, rest.slice(1));
    }
    case 'bootout': {
      const parsed = target(rest[0]);
      if ('code' in parsed) return parsed;
      if (parsed.label === null && rest.length < 2)
        return fail(64, 'fake launchctl: booting out a whole domain is not modelled');
      return bootout(env, parsed.label, rest.slice(1));
    }
    case 'kickstart':
      return kickstart(env, rest);
    case 'setenv':
    case 'unsetenv':
    case 'getenv': {
      const [key, value, ...extra] = rest;
      const arity = verb === 'setenv' ? 2 : 1;
      if (
        key === undefined ||
        !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ||
        rest.length !== arity ||
        extra.length > 0
      )
        return fail(64, `Usage: launchctl ${verb} <key>${verb === 'setenv' ? ' <value>' : ''}`);
      const vars = domainEnv(env);
      if (verb === 'getenv') return ok(vars[key] === undefined ? '' : `${vars[key]}\n`);
      if (verb === 'setenv') vars[key] = value ?? '';
      else delete vars[key];
      writeJson(join(launchdDir(env), 'env.json'), vars);
      return ok('');
    }
    case 'print': {
      const parsed = target(rest[0]);
      if ('code' in parsed) return parsed;
      if (parsed.label === null || rest.length !== 1)
        return fail(64, 'fake launchctl: only print gui/<uid>/<label> is modelled');
      return print(env, parsed.label);
    }
    default:
      return fail(
        64,
        `fake launchctl: unsupported command "${argv.join(' ')}" (the fake supports bootstrap, bootout, kickstart, print in gui/<uid>)`,
      );
  }
}
