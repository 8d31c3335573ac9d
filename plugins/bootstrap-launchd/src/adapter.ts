/**
 * The launchd bootstrap adapter's node half (contract §12; docs/adr/0020-launchd-jobs-of-their-own.md): the
 * controller as a LaunchAgent of the user's `gui/<uid>` domain, its plist in
 * `~/Library/LaunchAgents/`, driven with `launchctl bootstrap|bootout|kickstart|print` — always
 * through `ctx.processes`, never a shell.
 *
 * launchd has no reload: it reads a plist at `bootstrap` only (launchctl(1)), and a bootstrap
 * starts the job (`RunAtLoad`, launchd.plist(5)). So installing a definition (upgrade, rollback)
 * and recording a `--node-id` only write the plist, and the restart that always follows loads it:
 * `bootstrap` when launchd has not loaded the agent, `bootout` then `bootstrap` when the plist
 * changed since launchd loaded it (a bootout ends the controller and every process of its job),
 * `kickstart -k` when launchd runs what the plist says. Every upgrade, rollback and node-id change
 * restarts the controller exactly once (ADR 0024, superseding that part of ADR 0020). A stop is `bootout` —
 * `KeepAlive` would start a controller that was only signalled — and a start bootstraps the agent
 * again (or kickstarts it when it is loaded). Because a bootout ends every
 * process of the job, the runtime runner and the `--node-id` switch run as jobs of their own
 * (`launchDetached`: the label `dev.fleet.job.<slot>`), never as children of the controller.
 */
import { mkdir, rm } from 'node:fs/promises';
import {
  FleetError,
  describeRuntimeCommand,
  homePath,
  readDefinitionFile,
  readSupervisorRecord,
  SUPERVISOR_RECORD_PATH,
  withNodeId,
  writeDefinitionFile,
  writeSupervisorRecord,
  type BootstrapAdapter,
  type DefinitionFacts,
  type DetachedJob,
  type DetachedLaunch,
  type NodeContext,
  type ObservedSupervisor,
  type ProcessResult,
  type SupervisorDefinition,
  type SupervisorProblem,
} from '@fleet/core/plugin';
import {
  AGENTS_DIR,
  detachedJobPlist,
  JOB_LABEL_PREFIX,
  LABEL,
  LABEL_PATTERN,
  launchAgent,
  LOG_DIR,
  plistPath,
  readAgent,
} from './agent-plist.js';
import { parsePrint, type LaunchctlService } from './print.js';

export interface LaunchdAdapterOptions {
  /** The uid whose `gui` domain is driven (default: this process's). */
  readonly uid?: number;
  /** How long one `launchctl` may take (default 60 s: a bootout waits up to ExitTimeOut). */
  readonly timeoutMs?: number;
  /** The label when the node records none (default `dev.fleet.controller`). */
  readonly label?: string;
}

/** Everything observed about the agent, richer than {@link ObservedSupervisor} (for the prober). */
export interface AgentObservation extends ObservedSupervisor {
  readonly label: string;
  /** What the plist on disk says, or `null` when there is none. */
  readonly file: (DefinitionFacts & { readonly label: string | null }) | null;
  /** The plist on disk, byte for byte. */
  readonly content: string | null;
  /** What `launchctl print` said, or `null` when the agent is not loaded. */
  readonly service: LaunchctlService | null;
}

export type LaunchdAdapter = BootstrapAdapter & {
  launchDetached(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch>;
  uninstall(ctx: NodeContext): Promise<void>;
  observeAgent(ctx: NodeContext, label?: string): Promise<AgentObservation>;
  /** `launchctl print gui/<uid>/<label>`, parsed; `null` when launchd has no such service. */
  print(ctx: NodeContext, label: string): Promise<LaunchctlService | null>;
  labelName(ctx: NodeContext): Promise<string>;
};

const excerpt = (result: ProcessResult): string =>
  (result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`)
    .split(/\r?\n/)
    .slice(0, 3)
    .join(' / ')
    .slice(0, 500);

/** launchctl's "no such service": 113 from print/kickstart, 3 (ESRCH) from bootout. */
const NOT_LOADED = new Set([3, 113]);

/**
 * Whether launchd runs `service` as the plist `file` says (pure): the same `ProgramArguments`, and
 * the same `EnvironmentVariables` — launchd adds its own `XPC_*` names to what `print` shows.
 */
export function loadedAsFile(
  service: Pick<LaunchctlService, 'arguments' | 'environment'>,
  file: Pick<DefinitionFacts, 'command' | 'environment'>,
): boolean {
  if (JSON.stringify(service.arguments) !== JSON.stringify(file.command)) return false;
  const loaded = Object.entries(service.environment).filter(([name]) => !name.startsWith('XPC_'));
  const wanted = Object.entries(file.environment);
  return (
    loaded.length === wanted.length &&
    wanted.every(([name, value]) => service.environment[name] === value)
  );
}

/**
 * The agent's state in a line (pure). launchd has no failed state: `KeepAlive` starts a controller
 * that exited non-zero again after `ThrottleInterval`, for ever (launchd.plist(5)). A controller
 * not running whose last exit was non-zero is said `failed`, so that a restart waiting for it
 * (core's `waitForController`, the `--node-id` switch) rolls back at once instead of waiting out
 * its timeout for a start that keeps failing.
 */
export function agentState(service: LaunchctlService | null, running: boolean): string {
  if (service === null) return 'not loaded';
  const state = service.state ?? 'unknown';
  if (service.lastExitCode !== null && service.lastExitCode !== 0 && !running)
    return `failed: ${state} (last exit code ${service.lastExitCode})`;
  if (service.lastExitCode !== null) return `${state} (last exit code ${service.lastExitCode})`;
  return service.lastSignal ? `${state} (${service.lastSignal})` : state;
}

// Long as a factory: it returns the adapter's methods over one launchctl helper; each is short.
export function createLaunchdAdapter(options: LaunchdAdapterOptions = {}): LaunchdAdapter {
  const uid = options.uid ?? process.getuid?.() ?? 0;
  const domain = `gui/${uid}`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const defaultLabel = options.label ?? LABEL;

  const launchctl = (ctx: NodeContext, ...args: string[]): Promise<ProcessResult> =>
    ctx.processes.run({ command: 'launchctl', args, timeoutMs });
  const must = async (ctx: NodeContext, what: string, ...args: string[]): Promise<void> => {
    const result = await launchctl(ctx, ...args);
    if (result.exitCode !== 0 || result.timedOut) {
      throw new FleetError(
        'ACTION_FAILED',
        `launchctl ${args.join(' ')} (${what}) failed: ${excerpt(result)}`,
      );
    }
  };

  const labelName = async (ctx: NodeContext): Promise<string> => {
    const record = await readSupervisorRecord(ctx.home);
    return record?.supervisor === 'launchd' ? record.name : defaultLabel;
  };

  const print = async (ctx: NodeContext, label: string): Promise<LaunchctlService | null> => {
    const result = await launchctl(ctx, 'print', `${domain}/${label}`);
    if (NOT_LOADED.has(result.exitCode)) return null;
    if (result.exitCode !== 0 || result.timedOut) {
      throw new FleetError(
        'ACTION_FAILED',
        `launchctl print ${domain}/${label} failed: ${excerpt(result)}`,
      );
    }
    return parsePrint(result.stdout);
  };

  const bootout = async (ctx: NodeContext, label: string, what: string): Promise<void> => {
    const result = await launchctl(ctx, 'bootout', `${domain}/${label}`);
    if (result.exitCode !== 0 && !NOT_LOADED.has(result.exitCode)) {
      throw new FleetError(
        'ACTION_FAILED',
        `launchctl bootout ${domain}/${label} (${what}) failed: ${excerpt(result)}`,
      );
    }
  };

  /**
   * launchd has no reload: the loaded `service`, if any, goes (ending its processes) and the plist
   * on disk is bootstrapped anew (`RunAtLoad` starts it); then launchd must run what the file says.
   */
  const reload = async (
    ctx: NodeContext,
    label: string,
    service: LaunchctlService | null,
  ): Promise<void> => {
    const content = await readDefinitionFile(ctx.home, plistPath(label));
    if (content === null)
      throw new FleetError('ACTION_FAILED', `no agent at ${plistPath(label)} to load`);
    if (service !== null) await bootout(ctx, label, 'unloading the old agent');
    await must(ctx, 'loading the agent', 'bootstrap', domain, homePath(ctx.home, plistPath(label)));
    const loaded = await print(ctx, label);
    if (loaded === null || !loadedAsFile(loaded, readAgent(content))) {
      throw new FleetError(
        'ACTION_FAILED',
        `launchd did not load the new agent ${label} (it runs ${JSON.stringify(loaded?.arguments ?? null)})`,
      );
    }
  };

  /** launchd creates no directory: the log folder exists (0700) before a job writes to it. */
  const logDir = (ctx: NodeContext) =>
    mkdir(homePath(ctx.home, LOG_DIR), { recursive: true, mode: 0o700 });

  const adapter: LaunchdAdapter = {
    supervisor: 'launchd' as const,
    platforms: ['darwin'] as const,
    pointer: 'symlink' as const,

    definition: (input) => launchAgent(input, input.name ?? defaultLabel),
    readDefinition: (content: string) => {
      const { label: _label, ...facts } = readAgent(content);
      return facts;
    },
    labelName,
    print,

    async preflight(ctx: NodeContext): Promise<readonly SupervisorProblem[]> {
      const label = await labelName(ctx);
      const result = await launchctl(ctx, 'print', `${domain}/${label}`);
      if (result.exitCode === 0 || NOT_LOADED.has(result.exitCode)) return [];
      return [
        {
          code: 'LAUNCHD_DOMAIN_UNAVAILABLE',
          message: `launchd's ${domain} domain cannot be driven (${excerpt(result)}): a LaunchAgent needs the user logged in at the GUI (Fast User Switching keeps the session)`,
        },
      ];
    },

    async installDefinition(ctx: NodeContext, definition: SupervisorDefinition): Promise<void> {
      const facts = readAgent(definition.content);
      const label = facts.label ?? '';
      if (!LABEL_PATTERN.test(label) || definition.path !== plistPath(label)) {
        throw new FleetError(
          'USAGE',
          `a LaunchAgent lives in ${AGENTS_DIR}/<label>.plist, named after its Label, not ${definition.path}`,
        );
      }
      await logDir(ctx);
      // Written, not loaded: a bootstrap starts the job (`RunAtLoad`), so loading it here would
      // start the controller, and the restart that follows (runner.ts) would start it again. The
      // restart loads it — a bootstrap when launchd has not loaded the agent, a bootout and
      // bootstrap when it runs another definition — so an upgrade restarts it once (ADR 0024).
      await writeDefinitionFile(ctx.home, definition);
      await writeSupervisorRecord(ctx.home, {
        supervisor: 'launchd',
        name: label,
        definition: definition.path,
      });
    },

    async start(ctx: NodeContext): Promise<void> {
      const label = await labelName(ctx);
      if ((await print(ctx, label)) === null) {
        await logDir(ctx);
        await must(
          ctx,
          'loading the agent',
          'bootstrap',
          domain,
          homePath(ctx.home, plistPath(label)),
        );
      } else await must(ctx, 'starting the controller', 'kickstart', `${domain}/${label}`);
    },
    async stop(ctx: NodeContext): Promise<void> {
      await bootout(ctx, await labelName(ctx), 'stopping the controller');
    },
    async restart(ctx: NodeContext): Promise<void> {
      const label = await labelName(ctx);
      const service = await print(ctx, label);
      const content = await readDefinitionFile(ctx.home, plistPath(label));
      // A plist launchd has not loaded, or loaded before it changed (an installed generation, a
      // recorded --node-id), is read only by a bootstrap, which starts it: that is the restart,
      // and the only one (a kickstart after it would be a second).
      if (service === null || (content !== null && !loadedAsFile(service, readAgent(content)))) {
        await logDir(ctx);
        return reload(ctx, label, service);
      }
      await must(ctx, 'restarting the controller', 'kickstart', '-k', `${domain}/${label}`);
    },

    async observeAgent(ctx: NodeContext, given?: string): Promise<AgentObservation> {
      const label = given ?? (await labelName(ctx));
      const content = await readDefinitionFile(ctx.home, plistPath(label));
      const file = content === null ? null : readAgent(content);
      const service = await print(ctx, label);
      const running = service?.state === 'running' && service.pid !== null;
      const loaded =
        service !== null && service.arguments.length > 0
          ? describeRuntimeCommand(service.arguments)
          : null;
      const facts =
        service !== null && loaded !== null
          ? {
              command: service.arguments,
              generation: loaded.buildId,
              nodeIdFlag: loaded.nodeId,
            }
          : file;
      const changed = service !== null && file !== null && !loadedAsFile(service, file);
      return {
        label,
        present: service !== null,
        enabled: service !== null && content !== null,
        running,
        state: agentState(service, running),
        ...(running && service.pid !== null ? { pid: service.pid } : {}),
        ...(facts?.generation ? { generation: facts.generation } : {}),
        ...(facts?.nodeIdFlag ? { nodeIdFlag: facts.nodeIdFlag } : {}),
        ...(facts && facts.command.length > 0 ? { command: facts.command } : {}),
        ...(facts
          ? { source: service !== null ? ('supervisor' as const) : ('file' as const) }
          : {}),
        needsReload: changed,
        file,
        content,
        service,
      };
    },

    async observe(ctx: NodeContext): Promise<ObservedSupervisor> {
      const {
        label: _label,
        file: _file,
        content: _content,
        service: _service,
        ...observed
      } = await adapter.observeAgent(ctx);
      return observed;
    },

    async recordNodeId(
      ctx: NodeContext,
      nodeId: string,
    ): Promise<{ readonly previous: string | null }> {
      const label = await labelName(ctx);
      const content = await readDefinitionFile(ctx.home, plistPath(label));
      const facts = content === null ? null : readAgent(content);
      if (facts === null || facts.command.length === 0)
        throw new FleetError(
          'ACTION_FAILED',
          `no controller agent at ${plistPath(label)} with ProgramArguments to record --node-id in`,
        );
      // Written, not loaded: launchd reads a plist only at bootstrap, which starts the job — the
      // restart that follows does that, once (see the file comment).
      await writeDefinitionFile(
        ctx.home,
        launchAgent(
          {
            home: ctx.home,
            nodeId,
            command: withNodeId(facts.command, nodeId),
            environment: facts.environment,
          },
          label,
        ),
      );
      return { previous: facts.nodeIdFlag };
    },

    /**
     * A job of its own, `dev.fleet.job.<slot>` (docs/adr/0020-launchd-jobs-of-their-own.md): a bootout of the
     * controller's agent ends every process of its job, so the runner and the node-id switch are
     * bootstrapped as another service, which launchd ends only with itself. One per slot: an
     * earlier job of the slot that still runs is refused (LOCKED); one that ended is booted out
     * first. Its environment rides in its plist (0600), never on a command line.
     */
    async launchDetached(ctx: NodeContext, job: DetachedJob): Promise<DetachedLaunch> {
      const label = `${JOB_LABEL_PREFIX}${job.slot}`;
      if (!LABEL_PATTERN.test(label))
        throw new FleetError('USAGE', `${JSON.stringify(job.slot)} cannot name a launchd job`);
      const earlier = await print(ctx, label);
      if (earlier?.state === 'running') {
        throw new FleetError(
          'LOCKED',
          `the launchd job ${label} still runs an earlier job (pid ${earlier.pid ?? '?'}); nothing was started`,
        );
      }
      if (earlier !== null) await bootout(ctx, label, 'unloading the ended job');
      const definition = detachedJobPlist({ label, ...job });
      const file = await writeDefinitionFile(ctx.home, definition);
      await must(ctx, 'starting the job', 'bootstrap', domain, file);
      const started = await print(ctx, label);
      return {
        started: 'supervisor',
        pid: started?.pid ?? null,
        detail: `the launchd job ${label} of its own`,
      };
    },

    async uninstall(ctx: NodeContext): Promise<void> {
      const label = await labelName(ctx);
      await bootout(ctx, label, 'stopping the controller');
      await rm(homePath(ctx.home, plistPath(label)), { force: true });
      const record = await readSupervisorRecord(ctx.home);
      if (record?.supervisor === 'launchd')
        await rm(homePath(ctx.home, SUPERVISOR_RECORD_PATH), { force: true });
    },
  };
  return adapter;
}
