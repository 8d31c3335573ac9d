/**
 * `fleet lab restart` (contract §13): each lab node's controller stopped and started again by its
 * lab supervisor, on the same port with the same flags — the dev loop's second half (dev-plugins.ts):
 * a fresh controller process imports the linked plugins' rebuilt code. A restart whose controller
 * does not come back (a plugin that no longer loads, say) fails naming the host, with the tail of
 * its log; the other hosts are restarted all the same.
 *
 * A lab of systemd units has no lab supervisor to ask: `systemctl --user restart UNIT` is its way.
 */
import { readFile, realpath } from 'node:fs/promises';
import { FleetError, forEachHost, readSupervisorRecord } from '@fleet/core';
import { labSupervisorClient, type LabSupervisorState } from './supervisor-protocol.js';
import { labLayout, nodeLayout } from './layout.js';
import { readLabDocument } from './state.js';

export interface LabRestartOptions {
  readonly dir: string;
  /** The hosts to restart; every host of the lab when empty or absent. */
  readonly hosts?: readonly string[];
  readonly timeoutMs?: number;
}

export interface LabRestartResult {
  readonly dir: string;
  readonly hosts: readonly { readonly name: string; readonly pid: number | null }[];
}

/**
 * What the node's log says went wrong at its last start (pure): the plugin refusals and the
 * error's messages the controller printed since the supervisor last started it.
 */
export function lastStartProblems(log: string, max = 8): string[] {
  const lines = log.trimEnd().split('\n');
  const start = lines.findLastIndex((line) => line.includes('supervisor: starting controller'));
  return lines
    .slice(Math.max(start, 0))
    .filter((line) => /warning:|Error:|"message":/.test(line))
    .map((line) => line.replace(/^\[[^\]]*\] supervisor: (controller: )?/, '').trim())
    .slice(-max);
}

async function tail(path: string): Promise<string> {
  return lastStartProblems(await readFile(path, 'utf8').catch(() => '')).join('\n');
}

/** The hosts of `known` that `asked` names (all when none), or `USAGE` naming an unknown one. */
export function restartTargets(known: readonly string[], asked: readonly string[]): string[] {
  const unknown = asked.filter((host) => !known.includes(host));
  if (unknown.length > 0) {
    throw new FleetError(
      'USAGE',
      `no lab host ${unknown.join(', ')} (the lab has ${known.join(', ')})`,
    );
  }
  return asked.length === 0 ? [...known] : known.filter((host) => asked.includes(host));
}

export async function labRestart(options: LabRestartOptions): Promise<LabRestartResult> {
  const dir = await realpath(options.dir).catch(() => options.dir);
  const lab = labLayout(dir);
  const document = await readLabDocument(lab.labFile);
  if (!document) {
    throw new FleetError('USAGE', `${dir} holds no lab`, {
      suggestions: [`start one: fleet lab up --dir ${options.dir}`],
    });
  }
  const targets = restartTargets(
    document.hosts.map((host) => host.name),
    options.hosts ?? [],
  );
  const outcomes = await forEachHost(
    targets,
    async (host): Promise<LabSupervisorState> => {
      const node = nodeLayout(lab, host);
      const record = await readSupervisorRecord(node.home).catch(() => null);
      if (record?.supervisor === 'systemd-user') {
        throw new FleetError(
          'USAGE',
          `${host}: its controller is a unit of your systemd --user manager (${record.name}): systemctl --user restart ${record.name}`,
        );
      }
      try {
        return await labSupervisorClient(
          node.socket,
          options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
        ).restart();
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new FleetError('ACTION_FAILED', `${host}: ${message}\n${await tail(node.log)}`, {
          suggestions: [`is the lab up? fleet lab up --dir ${options.dir}`],
        });
      }
    },
    { concurrency: 4 },
  );
  const failed = outcomes.filter((outcome) => !outcome.ok);
  const first = failed[0];
  if (first !== undefined && !first.ok) {
    if (failed.length === 1 && first.error instanceof FleetError) throw first.error;
    throw new FleetError(
      'ACTION_FAILED',
      `${failed.length} of ${targets.length} lab controllers did not restart; first: ${first.error.message}`,
    );
  }
  return {
    dir,
    hosts: outcomes.map((outcome) => ({
      name: outcome.host,
      pid: outcome.ok ? outcome.value.pid : null,
    })),
  };
}
