/**
 * The installers' fail-closed `check` answers (contract §8.2), kept under `.git/fleet-cache/`
 * across runs (contract §14, "means": no per-call work a cache can skip). Every host renders its
 * own view, so the per-run memo of `targetsForHost` never hits across hosts; a 1,000-host drift
 * otherwise parses 1,000 router.yaml views on every call (the router's check is a YAML parse).
 *
 * A check is a pure function of the plugin's code, the declared file and the content
 * (docs/plugin-authoring.md), so an answer is keyed by all three: the plugin's name, version,
 * type and tarball sha256, the domain, the declared file as JSON, and the sha256 of the content.
 * A changed plugin (another version or tarball) or changed content never reuses an old answer. A
 * linked plugin (`type: link`, code that changes without a new version) is never cached, like
 * `cache/repo-files.ts`. What a run checked is written once, at the end of the verb (`save`),
 * and only when something was checked afresh. Like every file there (`cache/store.ts`), a torn,
 * corrupt or foreign file is a miss; deleting it is always safe.
 */
import { createHash, type Hash } from 'node:crypto';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import type { Problem } from '../errors.js';
import type { ManagedFile } from '../interfaces/domain.js';
import type { Installer } from '../interfaces/installer.js';
import type { PluginRef } from '../interfaces/registration.js';
import { readCacheFile, writeCacheFile } from './store.js';

const CHECKS_CACHE_FILE = 'checks-v1.json';
const CHECKS_CACHE_FORMAT = 'fleet.checks-cache/v1';
/** Answers kept: this run's first, then the newest earlier ones (a fleet of 1,000 hosts needs 2,000). */
export const CHECKS_CACHE_ENTRIES = 20_000;

const problemSchema = z.lazy(() =>
  z.strictObject({
    file: z.string().optional(),
    line: z.number().int().positive().optional(),
    path: z.string().optional(),
    message: z.string(),
  }),
);
const answerSchema = z.lazy(() => z.array(problemSchema));
const bodySchema = z.lazy(() =>
  z.strictObject({
    answers: z.record(z.string().regex(/^[0-9a-f]{64}$/), answerSchema),
  }),
);

export type InstallerCheck = NonNullable<Installer['check']>;

export interface CheckAnswers {
  /**
   * `check` answered from the cache for a (file, content) this plugin checked before, else checked
   * and remembered. A linked plugin, or no cache directory: `check` itself.
   */
  wrap(plugin: PluginRef, domain: string, check: InstallerCheck): InstallerCheck;
  /** Writes the answers when anything was checked afresh (best effort, never throws). */
  save(): void;
}

/** The key prefix of one plugin's checks of one declared file. */
function filePrefix(plugin: PluginRef, domain: string, file: ManagedFile): string {
  return JSON.stringify([
    plugin.name,
    plugin.version,
    plugin.type ?? null,
    plugin.sha256 ?? null,
    domain,
    file,
  ]);
}

/**
 * The cache key of one answer: the sha256 of the plugin and file (`filePrefix`, JSON: it holds no
 * NUL), a NUL, and the content. `prefix` is that hash fed the prefix and the NUL already (copied,
 * never consumed), so the prefix is hashed once per file and not once per host.
 */
export function checkAnswerKey(prefix: Hash, content: string): string {
  return prefix.copy().update(content, 'utf8').digest('hex');
}

/** The hash `checkAnswerKey` continues for one plugin's checks of one declared file. */
export function checkAnswerPrefix(plugin: PluginRef, domain: string, file: ManagedFile): Hash {
  return createHash('sha256')
    .update(filePrefix(plugin, domain, file), 'utf8')
    .update('\0');
}

/** The check answers of the repository whose cache directory is `cacheDir` (`cacheDirOf`). */
export function checkAnswerCache(cacheDir: string | null): CheckAnswers {
  let earlier: Record<string, readonly Problem[]> | undefined;
  const used = new Map<string, readonly Problem[]>();
  let fresh = false;
  const readEarlier = (dir: string): Record<string, readonly Problem[]> => {
    if (earlier === undefined) {
      const parsed = bodySchema.safeParse(
        readCacheFile(dir, CHECKS_CACHE_FILE, CHECKS_CACHE_FORMAT),
      );
      earlier = parsed.success ? parsed.data.answers : {};
    }
    return earlier;
  };
  return {
    wrap(plugin, domain, check) {
      if (cacheDir === null || plugin.type === 'link') return check;
      const prefixes = new WeakMap<ManagedFile, Hash>();
      return (file, content) => {
        let prefix = prefixes.get(file);
        if (prefix === undefined)
          prefixes.set(file, (prefix = checkAnswerPrefix(plugin, domain, file)));
        const key = checkAnswerKey(prefix, content);
        let problems = used.get(key) ?? readEarlier(cacheDir)[key];
        if (problems === undefined) {
          problems = check(file, content);
          // Only an answer the file's schema reads back is kept (a foreign field would make
          // the whole file unreadable, and every answer a miss).
          if (!answerSchema.safeParse(problems).success) return problems;
          fresh = true;
        }
        used.set(key, problems);
        return problems;
      };
    },
    save() {
      if (cacheDir === null || !fresh) return;
      const answers: Record<string, readonly Problem[]> = {};
      let kept = 0;
      for (const [key, problems] of used) {
        answers[key] = problems;
        kept += 1;
      }
      for (const [key, problems] of Object.entries(earlier ?? {})) {
        if (kept >= CHECKS_CACHE_ENTRIES) break;
        if (key in answers) continue;
        answers[key] = problems;
        kept += 1;
      }
      writeCacheFile(cacheDir, CHECKS_CACHE_FILE, CHECKS_CACHE_FORMAT, { answers });
      fresh = false;
    },
  };
}
