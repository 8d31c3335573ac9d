/**
 * How a step of the acceptance cycle (acceptance.ts) runs and is checked: `fleet` (and, for the
 * refused change, git) run in the kit's own environment — never the caller's oclif directories,
 * operator state or repository —, each command's exit code and output held to what the step
 * needs, and the {@link AcceptanceStepError} the first step that does not hold throws. Apart from
 * acceptance.ts so that file keeps only the steps themselves, in order, next to their checks.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { driftReportSchema, type DriftReportItem, type LabDocument } from '@fleet/core';
import * as z from '@fleet/core/zod';
import type { AcceptanceNodeActions } from './acceptance-actions.js';

/** One command of the cycle that did not do what the cycle needs. */
export class AcceptanceStepError extends Error {
  override readonly name = 'AcceptanceStepError';
  constructor(
    readonly step: string,
    readonly command: readonly string[],
    readonly exitCode: number,
    readonly output: string,
    why: string,
  ) {
    super(
      `acceptance step "${step}": ${why}\n$ fleet ${command.join(' ')} (exit ${exitCode})\n${output}`,
    );
  }
}

interface Ran {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `fleet ARGS` with `env` (the whole environment: the kit's own, see `environment`). */
export function runFleet(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Ran> {
  const [command, argv] = bin.endsWith('.js')
    ? [process.execPath, [bin, ...args]]
    : [bin, [...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ exitCode: code ?? -1, stdout, stderr }));
  });
}

/** The kit's environment: yours, with fleet's directories and the operator's state its own. */
export function environment(tmp: string, lab?: LabDocument): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['FLEET_REPO', 'FLEET_CREDENTIALS']) delete env[name];
  return {
    ...env,
    FLEET_DATA_DIR: join(tmp, 'oclif', 'data'),
    FLEET_CONFIG_DIR: join(tmp, 'oclif', 'config'),
    FLEET_CACHE_DIR: join(tmp, 'oclif', 'cache'),
    XDG_STATE_HOME: join(tmp, 'operator-state'),
    FLEET_RESIDENT: 'off',
    NO_COLOR: '1',
    ...(lab === undefined ? {} : { FLEET_REPO: lab.repo, FLEET_CREDENTIALS: lab.credentials }),
  };
}

export interface Cycle {
  readonly bin: string;
  readonly tmp: string;
  readonly dir: string;
  readonly domain: string;
  readonly path: string;
  readonly plugin: string;
  /** The first file's canonical source, under `domains/<domain>/` in the lab's repository. */
  readonly canonical: string;
  readonly handEdit: (installed: string) => string;
  readonly nodeActions: AcceptanceNodeActions | undefined;
  readonly refusedChange: ((canonical: string) => string) | undefined;
}

/** Why some of `items` are not in one of the `allowed` states; undefined when all are. */
function offStates(
  items: readonly DriftReportItem[],
  allowed: readonly string[],
): string | undefined {
  const off = items.filter((item) => !allowed.includes(item.state));
  if (off.length === 0) return undefined;
  const what = off.map((i) => `${i.path} is ${i.state}${i.detail ? ` (${i.detail})` : ''}`);
  return `${what.join('; ')}; expected ${allowed.join(' or ')}`;
}

/** The steps of one cycle: each command run, its exit code and output checked. */
export class Steps {
  lab: LabDocument | undefined;
  constructor(private readonly c: Cycle) {}

  async run(name: string, args: readonly string[], exits: readonly number[]): Promise<Ran> {
    const ran = await runFleet(this.c.bin, args, environment(this.c.tmp, this.lab));
    if (!exits.includes(ran.exitCode)) {
      const why = `exit ${ran.exitCode}, expected ${exits.join(' or ')}`;
      throw new AcceptanceStepError(name, args, ran.exitCode, ran.stdout + ran.stderr, why);
    }
    return ran;
  }

  async json<T>(
    name: string,
    args: readonly string[],
    exits: readonly number[],
    schema: z.ZodType<T>,
  ): Promise<T> {
    const ran = await this.run(name, args, exits);
    try {
      return schema.parse(JSON.parse(ran.stdout));
    } catch (error) {
      const why = `unexpected output: ${(error as Error).message}`;
      throw new AcceptanceStepError(name, args, ran.exitCode, ran.stdout + ran.stderr, why);
    }
  }

  /** `fleet drift` of the domain on `host`, its items checked to be in the `allowed` states. */
  async drift(
    name: string,
    host: string,
    exits: readonly number[],
    allowed: readonly string[],
    only?: string,
  ): Promise<DriftReportItem[]> {
    const args = ['drift', '--domain', this.c.domain, '--json'];
    const report = await this.json(name, args, exits, driftReportSchema);
    const items = (report.hosts.find((h) => h.host === host)?.items ?? []).filter(
      (i) => i.domain === this.c.domain,
    );
    const checked = only === undefined ? items : items.filter((item) => item.path === only);
    const wrong =
      checked.length === 0 ? `no item of domain ${this.c.domain}` : offStates(checked, allowed);
    if (wrong !== undefined)
      throw new AcceptanceStepError(name, args, 0, JSON.stringify(items, null, 2), wrong);
    return items;
  }
}

/** Runs `git ARGS` in `repo` (the lab's repository); throws with its output when it fails. */
export async function git(repo: string, args: readonly string[]): Promise<void> {
  const ran = await new Promise<Ran>((resolve, reject) => {
    const child = spawn('git', ['-C', repo, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ exitCode: code ?? -1, stdout: output, stderr: '' }));
  });
  if (ran.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stdout}`);
}
