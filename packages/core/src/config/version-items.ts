/**
 * The items of one host's versions answer (contract §11) that fleet.yaml and the node's answer
 * alone decide: the runtime against `canonicalVersion` (and the canonical artifact), each probed
 * tool with its PATH shadowing, each plugin fleet.yaml names (contract §10.5) and, on macOS,
 * fleet's launchd agents. Pure. The `fleet` executables' shadowing is version-shadowing.ts's, the
 * supervisor's items version-supervisor.ts's; version.ts puts them all together.
 */
import type { VersionItem } from '../report/version-report.js';
import { compareSemver } from '../semver.js';
import { describePin, describePluginMismatch, pluginMismatches } from '../runtime/plugins.js';
import type { PinnedPlugin } from '../schemas/runtime-plugins.js';
import {
  LEGACY_LAUNCHD_LABEL,
  type FleetOnPath,
  type LaunchdAgent,
  type VersionsResponse,
} from '../wire/versions.js';
import type { VersionDesired } from './version-desired.js';
import { findShadowing } from './version-shadowing.js';

/** The runtime against `canonicalVersion` (and the canonical artifact's build, when named). */
export function runtimeItem(
  answer: Pick<VersionsResponse, 'package' | 'version' | 'build'>,
  desired: Pick<VersionDesired, 'canonicalVersion' | 'artifact'>,
): VersionItem {
  const base = {
    layer: 'version' as const,
    kind: 'runtime' as const,
    name: answer.package,
    version: answer.version,
    expected: desired.canonicalVersion,
  };
  const order = compareSemver(answer.version, desired.canonicalVersion);
  const build =
    answer.build.sha256 === null
      ? 'development build (not run from a staged generation)'
      : `build ${answer.build.sha256.slice(0, 12)}${answer.build.commit ? ` (commit ${answer.build.commit.slice(0, 12)})` : ''}`;
  if (order === null) {
    return {
      ...base,
      state: 'error',
      detail: `${answer.version} is not a semantic version; ${build}`,
    };
  }
  if (order === -1) {
    return { ...base, state: 'stale', detail: `older than ${desired.canonicalVersion}; ${build}` };
  }
  if (order === 1) {
    return {
      ...base,
      state: 'diverged',
      detail: `newer than the canonical ${desired.canonicalVersion}; ${build}`,
    };
  }
  if (
    desired.artifact &&
    answer.build.sha256 !== null &&
    answer.build.sha256 !== desired.artifact.sha256
  ) {
    return {
      ...base,
      state: 'diverged',
      detail: `${build} is not the canonical artifact ${desired.artifact.sha256.slice(0, 12)}`,
    };
  }
  return { ...base, state: 'current', detail: build };
}

/** Where a tool was looked for, for a `missing` item's detail. */
function pathWords(answer: Pick<VersionsResponse, 'loginPath'>): string {
  switch (answer.loginPath?.source) {
    case 'policy':
      return "the node policy's versions.path";
    case 'login-shell':
      return "the user's login PATH";
    default:
      return "the controller's PATH";
  }
}

/** `also on PATH: /b/x (1.2.0), /c/x (dead: …)` for the entries after the one that runs. */
function othersOnPath(runs: string | undefined, onPath: readonly FleetOnPath[]): string {
  const others = onPath.filter((entry) => entry.path !== runs);
  if (others.length === 0) return '';
  const shown = others.map((entry) =>
    entry.runnable
      ? `${entry.path} (${entry.version ?? entry.detail})`
      : `${entry.path} (dead: ${entry.detail})`,
  );
  return `; also on PATH: ${shown.join(', ')}`;
}

/**
 * One probed tool: `current` when the executable a shell runs answered `--version`; `missing` when
 * nothing of its name can run — none on the PATH, only dead links, or the one that runs has lost
 * its interpreter (the ADR's removed Python: such a tool is not current); `error` when it failed.
 * Each carries every executable of the name along the PATH, in order (`onPath`).
 */
function toolItem(name: string, answer: VersionsResponse): VersionItem {
  const base = { layer: 'version' as const, kind: 'tool' as const, name };
  const tool = answer.tools.find((t) => t.name === name);
  if (!tool) return { ...base, state: 'error', detail: 'the node did not report this tool' };
  if (tool.state === 'refused') {
    // Not probed: the node decides what runs on it (contract §5.1).
    return { ...base, state: 'error', detail: tool.detail };
  }
  const onPath = tool.onPath ?? [];
  const listed = onPath.length === 0 ? {} : { onPath };
  if (tool.state === 'missing') {
    return {
      ...base,
      ...(tool.path === undefined ? {} : { path: tool.path }),
      state: 'missing',
      detail: `${tool.detail ?? `${name} is not on ${pathWords(answer)}`}${othersOnPath(tool.path, onPath)}`,
      ...listed,
    };
  }
  if (tool.state === 'failed') {
    return {
      ...base,
      path: tool.path,
      state: 'error',
      detail: `${tool.detail}${othersOnPath(tool.path, onPath)}`,
      ...listed,
    };
  }
  const others = othersOnPath(tool.path, onPath);
  return {
    ...base,
    path: tool.path,
    state: 'current',
    version: tool.version,
    ...(others === '' ? {} : { detail: `runs ${tool.path}${others}` }),
    ...listed,
  };
}

/** Each probed tool's item and, after it, the items of its PATH shadowing. */
export function toolItems(answer: VersionsResponse, desired: VersionDesired): VersionItem[] {
  return [...new Set(desired.tools)].flatMap((name): VersionItem[] => {
    const tool = answer.tools.find((t) => t.name === name);
    const onPath = tool && tool.state !== 'refused' ? (tool.onPath ?? []) : [];
    // PATH shadowing of every probed tool, by the same decision table as `fleet`'s.
    const shadowing = findShadowing(onPath).map((s): VersionItem => ({
      layer: 'version',
      kind: 'shadowing',
      name,
      path: s.path,
      state: 'stale',
      detail: s.detail,
    }));
    return [toolItem(name, answer), ...shadowing];
  });
}

/**
 * Each plugin fleet.yaml names against the node's (its catalog's `plugins`): `current` when the
 * node loaded that version from that tarball, `missing` when it has none of that name, `diverged`
 * when it has another version or build. A runtime that reports no plugins carries none.
 */
export function pluginItems(
  carried: readonly PinnedPlugin[] | undefined,
  named: readonly PinnedPlugin[],
): VersionItem[] {
  const mismatches = pluginMismatches(named, carried ?? []);
  return named.map((pin): VersionItem => {
    const base = {
      layer: 'version' as const,
      kind: 'plugin' as const,
      name: pin.name,
      expected: pin.version,
      expectedSha256: pin.sha256,
    };
    const mismatch = mismatches.find((m) => m.expected.name === pin.name);
    if (!mismatch) {
      return {
        ...base,
        state: 'current',
        version: pin.version,
        sha256: pin.sha256,
        detail: `loaded from the generation: ${describePin(pin)}`,
      };
    }
    const where =
      carried === undefined
        ? "the node's runtime (which predates plugins in fleet.yaml)"
        : 'the node';
    const detail = `${describePluginMismatch(mismatch, where)}: upgrade it to an artifact that carries it (contract §10.5)`;
    if (mismatch.actual === null) return { ...base, state: 'missing', detail };
    return {
      ...base,
      state: 'diverged',
      version: mismatch.actual.version,
      sha256: mismatch.actual.sha256,
      detail,
    };
  });
}

/** fleet's launchd agents on macOS: those installed or loaded, each judged by its state. */
export function launchdItems(agents: readonly LaunchdAgent[]): VersionItem[] {
  const out: VersionItem[] = [];
  for (const agent of agents) {
    const base = { layer: 'runtime' as const, kind: 'launchd' as const, name: agent.label };
    if (!agent.present && !agent.loaded) continue; // not installed on this host: nothing to say
    if (LEGACY_LAUNCHD_LABEL.test(agent.label)) {
      out.push({
        ...base,
        state: 'stale',
        detail: `an agent of the old label scheme: fleet schedule install of the same report replaces it with dev.fleet.report-${agent.label.replace(/^.*(\.schedule\.|report-)/, '')}`,
      });
      continue;
    }
    const shown = `state ${agent.state ?? 'unknown'}${agent.pid === null ? '' : `, pid ${agent.pid}`}, last exit status ${agent.lastExitStatus ?? 'none'}`;
    if (agent.present && !agent.loaded) {
      out.push({
        ...base,
        state: 'missing',
        detail: 'its plist is present but launchd has not loaded it',
      });
    } else if (!agent.present) {
      out.push({
        ...base,
        state: 'unmanaged',
        detail: `loaded without a plist in ~/Library/LaunchAgents (${shown})`,
      });
    } else if (agent.lastExitStatus !== null && agent.lastExitStatus !== 0) {
      out.push({ ...base, state: 'stale', detail: `loaded; ${shown}` });
    } else {
      out.push({ ...base, state: 'current', detail: `loaded; ${shown}` });
    }
  }
  return out;
}
