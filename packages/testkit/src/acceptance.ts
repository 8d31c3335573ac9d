/**
 * The acceptance kit (docs/plugin-authoring.md, "The acceptance test"): one call runs a domain
 * plugin through fleet's real cycle from the plugin's own repository, the way Terraform's
 * `resource.Test` or Molecule's converge/verify run a provider or a role — the real `fleet` CLI,
 * a real lab on 127.0.0.1 whose node serves the plugin from its folder (the lab's dev loop,
 * contract §13), real git, real files:
 *
 *   1. `fleet plugins link PLUGIN` (in oclif directories of its own, never yours) and `fleet lab up`;
 *   2. `fleet drift`: the domain is served — its files are `missing`, none is `error`;
 *   3. `fleet config plan` then `fleet config install --confirm`: installed and verified;
 *   4. `fleet drift`: every file `current`;
 *   5. a hand edit on the node: `fleet drift` says `diverged` (or `modified`), and an install
 *      without `--force` refuses to overwrite it (exit 7);
 *   6. `fleet config adopt --promote`: the edit is in the repository and the host `current` again.
 *
 * With `nodeActions` (acceptance-actions.ts) the lab's node defines the domain's coupled actions
 * and fleet.yaml asks for them, so step 3's receipt must show each named role's action `ok`; with
 * `refusedChange` too, a last step commits a change the action refuses and checks the install
 * is refused (exit 6, `ACTION_FAILED`) and leaves the node's file byte for byte as it was.
 *
 * Each step is checked as it runs; the first that does not hold throws an
 * {@link AcceptanceStepError} naming the step, the command and its output. What every step saw is
 * returned, typed, for the test's own assertions. The lab is always taken down.
 *
 * The steps are here, in order, read top to bottom by authors who copy them, each step's check
 * next to the command it checks; how a command is run and its exit code and output checked is
 * acceptance-steps.ts.
 *
 * It needs the `fleet` CLI: `$FLEET_BIN` (a path; a `.js` entry runs on this Node.js) or `fleet`
 * on PATH. Without one, {@link acceptanceUnavailable} says why, for `skipForEnvironment`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  labDocumentSchema,
  receiptSchema,
  type DomainDeclaration,
  type DriftReportItem,
  type LabDocument,
  type Receipt,
} from '@fleet/core';
import * as z from '@fleet/core/zod';
import {
  namedRoles,
  nodeActionsDocument,
  rolesNotRun,
  type AcceptanceNodeActions,
} from './acceptance-actions.js';
import {
  AcceptanceStepError,
  environment,
  git,
  runFleet,
  Steps,
  type Cycle,
} from './acceptance-steps.js';
import { hasSystemTool } from './system-tools.js';

/** The environment variable naming the `fleet` executable the kit runs. */
export const FLEET_BIN_ENV = 'FLEET_BIN';

export interface AcceptanceOptions {
  /** The plugin's folder (its package.json), built. */
  readonly plugin: string;
  /** The domain under test, as the plugin declares it (its first file is hand-edited). */
  readonly declaration: DomainDeclaration;
  /** The `fleet` executable (default: `$FLEET_BIN`, else `fleet` on PATH). */
  readonly fleet?: string;
  /**
   * The hand edit of step 5, given the installed file's text. Default: a comment line inside the
   * managed part (before a block's end marker, or at the end of a whole file); a `json` file needs
   * one of its own.
   */
  readonly handEdit?: (installed: string) => string;
  /** Keep the lab's directory (its path is in the result) rather than removing it. */
  readonly keep?: boolean;
  /**
   * The domain's coupled actions: the node policy actions the lab's node defines and the roles
   * its fleet.yaml names (`{ actions: { 'npmrc-check': { argv: [...] } }, validate: 'npmrc-check' }`).
   * The install must then show each role's action `ok`.
   */
  readonly nodeActions?: AcceptanceNodeActions;
  /**
   * A change of the first file's canonical source that the coupled action refuses (the canonical's
   * text in, the changed text out): a last step commits it and checks that the install rolls back
   * — exit 6, `ACTION_FAILED`, the node's file byte for byte as it was. Needs `nodeActions`.
   */
  readonly refusedChange?: (canonical: string) => string;
}

export interface AcceptanceResult {
  /** The lab directory (removed unless `keep`). */
  readonly dir: string;
  readonly lab: LabDocument;
  readonly host: string;
  /** The hand-edited file, `~/`-relative. */
  readonly path: string;
  /** The domain's drift items at each step. */
  readonly drift: {
    readonly before: readonly DriftReportItem[];
    readonly installed: readonly DriftReportItem[];
    readonly handEdited: readonly DriftReportItem[];
    readonly adopted: readonly DriftReportItem[];
  };
  readonly receipt: Receipt;
  /** The install refused over the hand edit: its exit code and error code. */
  readonly refusedOverHandEdit: { readonly exitCode: number; readonly code: string };
  /** The commit `config adopt --promote` made. */
  readonly adoptCommit: string;
  /**
   * With `refusedChange`: the install the action refused (exit 6, `ACTION_FAILED`). A validate
   * action refuses before anything is replaced — an error, no receipt —; a reload or restart
   * fails after the writes, which are restored — a `rolled-back` receipt.
   */
  readonly refusedByAction?: RefusedByAction;
}

/** The install a coupled action refused, as the operator saw it (`fleet config install --json`). */
export interface RefusedByAction {
  readonly exitCode: number;
  /** `ACTION_FAILED`. */
  readonly code: string;
  readonly message: string;
  /**
   * A refusal before the writes (validate), where the action's node policy entry says
   * `output: return`: the tail of what the action printed, redacted on the node (the last 20
   * lines, at most 2 KiB) — what the operator is shown under the error. Absent otherwise.
   */
  readonly toolOutput?: string;
  /** After the writes (reload, restart): the rolled-back receipt. */
  readonly receipt?: Receipt;
}

/** The `fleet` executable the kit would run, or undefined. */
export function fleetExecutable(explicit?: string): string | undefined {
  const named = explicit ?? process.env[FLEET_BIN_ENV];
  if (named !== undefined && named !== '') return named;
  return hasSystemTool('fleet') ? 'fleet' : undefined;
}

/** Why the kit cannot run here (no `fleet` CLI), or undefined when it can. */
export function acceptanceUnavailable(explicit?: string): string | undefined {
  if (fleetExecutable(explicit) !== undefined) return undefined;
  return `the acceptance cycle runs the real fleet CLI: set ${FLEET_BIN_ENV} to it, or put fleet on PATH`;
}

const adoptSchema = z.looseObject({ commit: z.string().regex(/^[0-9a-f]{40,64}$/) });
const errorSchema = z.looseObject({ error: z.looseObject({ code: z.string() }) });

/** The default hand edit: a comment line inside the managed part of `file`. */
export function defaultHandEdit(
  file: DomainDeclaration['files'][number],
): (installed: string) => string {
  if (file.format === 'json') {
    throw new TypeError(`${file.path} is JSON: pass handEdit, an edit that keeps it JSON`);
  }
  const end = file.kind === 'block' ? file.markers?.end : undefined;
  const comment = end === undefined ? '#' : (/^(\S+)\s/.exec(end)?.[1] ?? '#');
  const line = `${comment} edited by hand on the node`;
  return (installed) => {
    const eol = installed.includes('\r\n') ? '\r\n' : '\n';
    if (end === undefined) return `${installed}${installed.endsWith('\n') ? '' : eol}${line}${eol}`;
    const at = installed.lastIndexOf(end);
    if (at === -1) throw new TypeError(`the installed ${file.path} has no end marker ${end}`);
    return `${installed.slice(0, at)}${line}${eol}${installed.slice(at)}`;
  };
}

/** Runs the whole cycle (see the module comment); throws at the first step that does not hold. */
export async function runAcceptance(options: AcceptanceOptions): Promise<AcceptanceResult> {
  const bin = fleetExecutable(options.fleet);
  if (bin === undefined) throw new Error(acceptanceUnavailable(options.fleet));
  const file = options.declaration.files[0];
  if (file === undefined) throw new TypeError('the declaration has no file to hand-edit');
  const handEdit = options.handEdit ?? defaultHandEdit(file);
  if (options.refusedChange !== undefined && namedRoles(options.nodeActions).length === 0) {
    throw new TypeError('refusedChange needs nodeActions naming a role the change is refused by');
  }
  const tmp = await mkdtemp(join(tmpdir(), 'fleet-acceptance-'));
  const dir = join(tmp, 'lab');
  try {
    return await cycle({
      bin,
      tmp,
      dir,
      domain: options.declaration.domain,
      path: file.path,
      canonical: file.canonical,
      handEdit,
      plugin: options.plugin,
      nodeActions: options.nodeActions,
      refusedChange: options.refusedChange,
    });
  } finally {
    await runFleet(bin, ['lab', 'down', '--dir', dir], environment(tmp)).catch(() => undefined);
    if (options.keep !== true) await rm(tmp, { recursive: true, force: true });
  }
}

const planSchema = z.looseObject({ plans: z.array(z.looseObject({ changes: z.boolean() })) });
const installSchema = z.looseObject({ receipt: receiptSchema });
/** An install refused with exit 6: a rolled-back receipt, or the node's refusal before a write. */
const refusalSchema = z.looseObject({
  receipt: receiptSchema.optional(),
  error: z
    .looseObject({ code: z.string(), message: z.string(), toolOutput: z.string().optional() })
    .optional(),
});

async function cycle(c: Cycle): Promise<AcceptanceResult> {
  const steps = new Steps(c);
  await steps.run('link the plugin', ['plugins', 'link', c.plugin, '--no-install'], [0]);
  const labArgs = ['lab', 'up', '--hosts', '1', '--dir', c.dir, '--json'];
  if (c.nodeActions !== undefined) {
    const file = join(c.tmp, 'node-actions.json');
    await writeFile(file, JSON.stringify(nodeActionsDocument(c.domain, c.nodeActions), null, 2));
    labArgs.push('--node-actions', file);
  }
  const lab = await steps.json('lab up', labArgs, [0], labDocumentSchema);
  steps.lab = lab;
  const node = lab.hosts[0];
  if (node === undefined) throw new TypeError('lab up started no host');
  const host = node.name;
  const before = await steps.drift(
    'drift before the install',
    host,
    [0, 1],
    ['missing', 'current', 'stale'],
  );
  const planArgs = ['config', 'plan', host, c.domain, '--json'];
  const plan = await steps.json('plan', planArgs, [0], planSchema);
  if (!plan.plans.some((p) => p.changes)) {
    throw new AcceptanceStepError(
      'plan',
      planArgs,
      0,
      JSON.stringify(plan),
      'the plan changes nothing',
    );
  }
  const installArgs = ['config', 'install', host, c.domain, '--confirm', '--json'];
  const { receipt } = await steps.json('install', installArgs, [0], installSchema);
  if (!receipt.verified) {
    throw new AcceptanceStepError(
      'install',
      installArgs,
      0,
      JSON.stringify(receipt),
      'the receipt is not verified',
    );
  }
  const notRun = rolesNotRun(receipt, c.nodeActions);
  if (notRun !== undefined) {
    throw new AcceptanceStepError('install', installArgs, 0, JSON.stringify(receipt), notRun);
  }
  const installed = await steps.drift('drift after the install', host, [0], ['current']);
  const live = join(node.home, ...c.path.slice(2).split('/'));
  await writeFile(live, c.handEdit(await readFile(live, 'utf8')));
  const handEdited = await steps.drift(
    'drift after a hand edit',
    host,
    [1],
    ['diverged', 'modified'],
    c.path,
  );
  const refused = await steps.json('install over the hand edit', installArgs, [7], errorSchema);
  const adoptArgs = ['config', 'adopt', host, c.path, '--promote', '--json'];
  const adopted = await steps.json('adopt --promote', adoptArgs, [0], adoptSchema);
  const after = await steps.drift('drift after adopt --promote', host, [0], ['current']);
  const refusedByAction =
    c.refusedChange === undefined
      ? undefined
      : await refusedInstall(steps, c, lab.repo, live, installArgs, c.refusedChange);
  return {
    dir: c.dir,
    lab,
    host,
    path: c.path,
    drift: { before, installed, handEdited, adopted: after },
    receipt,
    refusedOverHandEdit: { exitCode: 7, code: refused.error.code },
    adoptCommit: adopted.commit,
    ...(refusedByAction === undefined ? {} : { refusedByAction }),
  };
}

/**
 * The last step with `refusedChange`: the change committed to the lab's repository, an install
 * the coupled action refuses — exit 6, a rolled-back receipt with `ACTION_FAILED` — and the node's
 * file byte for byte what it was.
 */
async function refusedInstall(
  steps: Steps,
  c: Cycle,
  repo: string,
  live: string,
  installArgs: readonly string[],
  change: (canonical: string) => string,
): Promise<RefusedByAction> {
  const source = join(repo, 'domains', c.domain, ...c.canonical.split('/'));
  await writeFile(source, change(await readFile(source, 'utf8')));
  const identity = [
    '-c',
    'user.name=fleet acceptance',
    '-c',
    'user.email=acceptance@fleet.invalid',
  ];
  await git(repo, [
    ...identity,
    'commit',
    '--quiet',
    '--all',
    '-m',
    `${c.domain}: a change refused`,
  ]);
  const before = await readFile(live);
  const name = 'install of a change the coupled action refuses';
  const answer = await steps.json(name, installArgs, [6], refusalSchema);
  const failure = answer.receipt?.error ?? answer.error;
  const refused: RefusedByAction = {
    exitCode: 6,
    code: failure?.code ?? '',
    message: failure?.message ?? '',
    ...(answer.error?.toolOutput === undefined ? {} : { toolOutput: answer.error.toolOutput }),
    ...(answer.receipt === undefined ? {} : { receipt: answer.receipt }),
  };
  const output = JSON.stringify(answer, null, 2);
  if (
    refused.code !== 'ACTION_FAILED' ||
    (refused.receipt && refused.receipt.outcome !== 'rolled-back')
  ) {
    const why = `expected ACTION_FAILED${refused.receipt ? ' and a rolled-back receipt' : ''}, got ${refused.code || 'no error'}`;
    throw new AcceptanceStepError(name, installArgs, 6, output, why);
  }
  if (!before.equals(await readFile(live))) {
    const why = `${c.path} on the node changed: the refused content must not stay written`;
    throw new AcceptanceStepError(name, installArgs, 6, output, why);
  }
  return refused;
}
