/**
 * Turns what every plugin's `fleet:register` hook returned (or threw) into the accepted set of
 * registrations and a list of problems, each attributed to its plugin. Pure: the oclif call that
 * collects the outcomes is the caller's (the CLI, the controller).
 *
 * A plugin is accepted or refused as a whole: a refused plugin contributes nothing, and never
 * takes the host down. Hooks run in parallel in no fixed order, so outcomes are sorted first
 * (bundled plugins before user-installed ones, then by name): the first claimant of a domain,
 * prober id, supervisor or path keeps it.
 */
import { foldPath } from '../policy/fold.js';
import type { FleetRegistration, PluginRef } from '../interfaces/registration.js';
import { zodProblems } from '../zod-problems.js';
import { formatProblem } from '../errors.js';
import { registrationEnvelopeSchema, registrationSchema } from './schema.js';
import { compareCodeUnits } from '../compare.js';

// PluginRef lives beside the registration descriptors (the caches read it too); its users here
// still find it here.
export type { PluginRef };

/** What one plugin's `fleet:register` hook returned, or threw. */
export type HookOutcome =
  | { readonly plugin: PluginRef; readonly ok: true; readonly result: unknown }
  | { readonly plugin: PluginRef; readonly ok: false; readonly error: unknown };

/** Why a plugin was refused: reported as a warning, never thrown. */
export interface RegistryProblem {
  /** `name@version` of the plugin the problem is attributed to. */
  readonly plugin: string;
  /** `PLUGIN_API_MISMATCH` for a foreign plugin API version, `PLUGIN_REFUSED` otherwise. */
  readonly code: 'PLUGIN_REFUSED' | 'PLUGIN_API_MISMATCH';
  /** One line naming the plugin and the reason. */
  readonly message: string;
}

/** A plugin accepted whole, with its validated registration. */
export interface AcceptedRegistration {
  readonly plugin: PluginRef;
  readonly registration: FleetRegistration;
}

/** The result of {@link assembleRegistrations}. */
export interface Assembly {
  /** The accepted plugins, in precedence order (bundled first, then by name). */
  readonly accepted: readonly AcceptedRegistration[];
  /** Every refusal, attributed to its plugin. */
  readonly problems: readonly RegistryProblem[];
}

const label = (plugin: PluginRef): string => `${plugin.name}@${plugin.version}`;

function bundledFirst(a: HookOutcome, b: HookOutcome): number {
  const rank = (o: HookOutcome): number => (o.plugin.type === 'core' ? 0 : 1);
  return rank(a) - rank(b) || compareCodeUnits(a.plugin.name, b.plugin.name);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

/** The claims a registration makes; two plugins may not share one. */
function claims(registration: FleetRegistration): Map<string, string> {
  const out = new Map<string, string>();
  for (const installer of registration.installers) {
    out.set(`domain ${installer.domain}`, installer.domain);
    // Paths folded (policy/fold.ts): two spellings of one file on APFS or NTFS are one claim.
    for (const file of installer.files) out.set(`path ${foldPath(file.path)}`, installer.domain);
    for (const derived of installer.derivedPaths ?? []) {
      out.set(`path ${foldPath(derived.path)}`, installer.domain);
    }
  }
  for (const prober of registration.probers) out.set(`prober ${prober.id}`, prober.id);
  for (const adapter of registration.bootstrapAdapters) {
    out.set(`bootstrap adapter ${adapter.supervisor}`, adapter.supervisor);
  }
  return out;
}

/** Consistency inside one registration (its own descriptors agree with each other). */
function internalProblems(registration: FleetRegistration): string[] {
  const problems: string[] = [];
  const domains = new Set<string>();
  for (const installer of registration.installers) {
    if (domains.has(installer.domain)) problems.push(`domain ${installer.domain} declared twice`);
    domains.add(installer.domain);
    const ids = new Set<string>();
    const paths = new Set<string>();
    for (const file of [...installer.files, ...(installer.derivedPaths ?? [])]) {
      if (ids.has(file.id)) problems.push(`domain ${installer.domain}: file id ${file.id} twice`);
      if (paths.has(file.path))
        problems.push(`domain ${installer.domain}: path ${file.path} twice`);
      ids.add(file.id);
      paths.add(file.path);
    }
    for (const derived of installer.derivedPaths ?? []) {
      if (!installer.files.some((file) => file.id === derived.derivedFrom)) {
        problems.push(
          `domain ${installer.domain}: derived path ${derived.id} names unknown file ${derived.derivedFrom}`,
        );
      }
    }
  }
  for (const adopter of registration.adopters) {
    if (!domains.has(adopter.domain)) {
      problems.push(`adopter for domain ${adopter.domain}, which this plugin does not declare`);
    }
  }
  for (const prober of registration.probers) {
    if (prober.domain !== undefined && !domains.has(prober.domain)) {
      problems.push(
        `prober ${prober.id} names domain ${prober.domain}, which this plugin does not declare`,
      );
    }
  }
  return problems;
}

/** Validates, attributes and de-duplicates the outcomes of one `fleet:register` run. */
export function assembleRegistrations(
  outcomes: readonly HookOutcome[],
  apiVersion: number,
): Assembly {
  const accepted: AcceptedRegistration[] = [];
  const problems: RegistryProblem[] = [];
  const owners = new Map<string, PluginRef>();
  const refuse = (plugin: PluginRef, message: string): void => {
    problems.push({ plugin: label(plugin), code: 'PLUGIN_REFUSED', message });
  };

  for (const outcome of [...outcomes].sort(bundledFirst)) {
    const { plugin } = outcome;
    if (!outcome.ok) {
      refuse(plugin, `plugin ${label(plugin)} failed to register: ${describeError(outcome.error)}`);
      continue;
    }
    const envelope = registrationEnvelopeSchema.safeParse(outcome.result);
    if (!envelope.success) {
      refuse(plugin, `plugin ${label(plugin)} returned no fleet registration from fleet:register`);
      continue;
    }
    if (envelope.data.apiVersion !== apiVersion) {
      problems.push({
        plugin: label(plugin),
        code: 'PLUGIN_API_MISMATCH',
        message: `plugin ${label(plugin)} targets fleet plugin API ${envelope.data.apiVersion}, but this fleet provides plugin API ${apiVersion}`,
      });
      continue;
    }
    const parsed = registrationSchema.safeParse(outcome.result);
    if (!parsed.success) {
      const first = zodProblems(parsed.error, undefined).slice(0, 3).map(formatProblem);
      refuse(plugin, `plugin ${label(plugin)} has an invalid registration: ${first.join('; ')}`);
      continue;
    }
    const registration = parsed.data as FleetRegistration;
    const internal = internalProblems(registration);
    if (internal.length > 0) {
      refuse(
        plugin,
        `plugin ${label(plugin)} has an inconsistent registration: ${internal.join('; ')}`,
      );
      continue;
    }
    const mine = claims(registration);
    const collision = [...mine.keys()].find((claim) => owners.has(claim));
    if (collision !== undefined) {
      const owner = owners.get(collision) as PluginRef;
      refuse(
        plugin,
        `plugin ${label(plugin)} claims ${collision}, already owned by plugin ${label(owner)}`,
      );
      continue;
    }
    for (const claim of mine.keys()) owners.set(claim, plugin);
    accepted.push({ plugin, registration });
  }
  return { accepted, problems };
}
