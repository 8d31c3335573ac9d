/**
 * The supervisor's definition of the runtime (contract §10.2, §12): which generation the
 * supervisor runs, and with which controller flags. The runner (runner.ts) installs one for the
 * target of an activation and for the prior generation of a rollback, then restarts the
 * supervisor; when the controller it started never answers, its supervisor's log says why
 * (controller-log.ts).
 */
import { basename } from 'node:path';
import {
  argvFlag,
  readDefinitionFile,
  readSupervisorRecord,
  runtimeCommand,
  runtimeLayout,
  type BootstrapAdapter,
  type ControllerListen,
  type NodeContext,
} from '@fleet/core/node';
import { controllerCertificateFiles, controllerListenFlags } from '../tls/certificate.js';
import { controllerLogLine } from './controller-log.js';
import { policySupervisorName, policySupervisorOf } from './supervisor.js';

const FLAGS_CARRIED = ['--port', '--bind', '--tls-cert', '--tls-key', '--allowed-host'] as const;

/** The runtime's definition on one node, installed through the adapter the transaction names. */
export class RuntimeDefinition {
  constructor(
    private readonly home: string,
    private readonly ctx: NodeContext,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * The supervisor's name for the controller (its unit, its task): the one the node recorded,
   * else the one its policy names (a first install), else the adapter's default.
   */
  private async recordedName(adapter: BootstrapAdapter): Promise<string | undefined> {
    const record = await readSupervisorRecord(this.home);
    if (record?.supervisor === adapter.supervisor) return record.name;
    return policySupervisorName(await policySupervisorOf(this.home), adapter.supervisor);
  }

  /** The controller flags a new definition keeps: port, bind, TLS, the runtime's environment. */
  private async currentShape(adapter: BootstrapAdapter): Promise<{
    readonly flags: ReadonlyMap<string, string>;
    readonly environment: Readonly<Record<string, string>>;
  }> {
    const observed = await adapter.observe(this.ctx).catch(() => null);
    // Only the definition's location is wanted: any valid input names it.
    const name = await this.recordedName(adapter);
    const probe = adapter.definition({
      home: this.home,
      nodeId: this.ctx.nodeId,
      command: [process.execPath],
      ...(name === undefined ? {} : { name }),
    });
    const content = await readDefinitionFile(this.home, probe.path).catch(() => null);
    const facts = content === null ? null : adapter.readDefinition(content);
    const command = observed?.command ?? facts?.command ?? [];
    const flags = new Map<string, string>();
    for (const flag of FLAGS_CARRIED) {
      const value = argvFlag(command, flag) ?? argvFlag(facts?.command ?? [], flag);
      if (value !== null) flags.set(flag, value);
    }
    return { flags, environment: facts?.environment ?? {} };
  }

  /**
   * Points the supervisor at generation `buildId` and restarts it; returns the command. With the
   * transaction's `listen` (fleet.yaml's controller URL, stage.ts), the controller is installed
   * to listen there — the certificate stage made when it serves TLS — so a first bootstrap
   * answers where every verb connects (issue 35). Without one (an older operator, a rollback) the
   * installed unit's flags are carried over.
   */
  async install(
    adapter: BootstrapAdapter,
    buildId: string,
    nodeId: string,
    listen: ControllerListen | null = null,
  ): Promise<readonly string[]> {
    const shape = await this.currentShape(adapter);
    const base = {
      nodePath: process.execPath,
      generationDir: runtimeLayout(this.home, this.ctx.platform).generation(buildId),
      home: this.home,
      nodeId,
    };
    let command: string[];
    if (listen !== null) {
      command = [
        ...runtimeCommand(base),
        ...controllerListenFlags(listen, listen.tls ? controllerCertificateFiles(this.home) : null),
      ];
    } else {
      const port = shape.flags.get('--port');
      command = runtimeCommand({
        ...base,
        ...(port === undefined ? {} : { port: Number(port) }),
        ...(shape.flags.has('--bind') ? { bind: shape.flags.get('--bind') } : {}),
      });
      for (const flag of ['--tls-cert', '--tls-key', '--allowed-host'] as const) {
        const value = shape.flags.get(flag);
        if (value !== undefined) command.push(flag, value);
      }
    }
    const name = await this.recordedName(adapter);
    await adapter.installDefinition(
      this.ctx,
      adapter.definition({
        home: this.home,
        nodeId,
        command,
        environment: shape.environment,
        ...(name === undefined ? {} : { name }),
      }),
    );
    this.log(`definition installed for ${buildId.slice(0, 12)}; restarting ${adapter.supervisor}`);
    await adapter.restart(this.ctx);
    return command;
  }

  /**
   * The controller's own last words (issue 35 item 3), for a failure where it never answered:
   * its supervisor's log, bounded and redacted (controller-log.ts).
   */
  async controllerLog(adapter: BootstrapAdapter): Promise<string> {
    const name = await this.recordedName(adapter);
    const unit = basename(
      adapter.definition({
        home: this.home,
        nodeId: this.ctx.nodeId,
        command: [process.execPath],
        ...(name === undefined ? {} : { name }),
      }).path,
    );
    const line = await controllerLogLine({ ctx: this.ctx, supervisor: adapter.supervisor, unit });
    this.log(line);
    return line;
  }
}
