/**
 * `domains/files/files.yaml` (contract §10.4), parsed and validated, pure: a strict schema, every
 * problem with its file, line and field (`FILES_MANIFEST_INVALID`). Each entry becomes a managed
 * file whose id is its node path, so a node names it without reading the repository.
 */
import * as z from '@fleet/core/zod';
import {
  FleetError,
  actionIdSchema,
  fileModeProblem,
  homePathOverlap,
  isFleetOwnPath,
  isHomePath,
  parseYaml,
  zodProblems,
  type ManagedFile,
  type Problem,
} from '@fleet/core/plugin';
import { MANIFEST } from './domain.js';

/** The placeholder of a marker template: `# {mark} fleet` → `# BEGIN fleet`, `# END fleet`. */
const MARK = '{mark}';

const homePath = z
  .string()
  .refine(isHomePath, 'must be a ~/-relative path inside the node home (no .., no absolute path)')
  .refine((path) => !isHomePath(path) || !isFleetOwnPath(path), {
    message: "is fleet's own state: never a managed file",
  });

const sourcePath = z
  .string()
  .refine((p) => isHomePath(`~/${p}`), 'must be a plain path beside files.yaml (no .., no /…)')
  .refine((p) => p !== MANIFEST, 'cannot be files.yaml itself');

const markerTemplate = z
  .string()
  .max(200)
  .refine((m) => m.split(MARK).length === 2, `must contain ${MARK} exactly once`)
  .refine((m) => !/[\r\n]/.test(m), 'must be one line')
  .refine((m) => m.replace(MARK, '').trim() !== '', `must say more than ${MARK}`);

/**
 * `"0600"` or `"600"`, quoted: YAML reads an unquoted 0600 as the decimal number 600, so a number
 * is refused rather than guessed at. Kept in the canonical four digits.
 */
const modeText = z
  .string({ error: 'must be a quoted octal string (mode: "0600"), not a number' })
  .refine((text) => fileModeProblem(text) === null, {
    error: (issue) => fileModeProblem(String(issue.input)) ?? 'is not a mode',
  })
  .transform((text) => text.padStart(4, '0'));

const entrySchema = z
  .strictObject({
    path: homePath,
    source: sourcePath,
    kind: z.enum(['whole', 'block']).default('whole'),
    marker: markerTemplate.optional(),
    /** The file's mode; for a block entry only when fleet creates the file (contract §10.4). */
    mode: modeText.optional(),
    /** A node policy action id (`domains.files.actions.<id>`), run after a write that changed it. */
    action: actionIdSchema.optional(),
    /**
     * `false`: the source is copied as it is, braces and all — no `{{ host.NAME }}` rendered, no
     * `{{ secret.NAME }}` resolved (a tmux, mustache or Go template file of the user's own).
     */
    template: z.boolean().default(true),
  })
  .refine((entry) => entry.kind === 'block' || entry.marker === undefined, {
    message: 'only a block entry has a marker',
    path: ['marker'],
  })
  .refine((entry) => entry.kind === 'whole' || entry.marker !== undefined, {
    message: `a block entry needs a marker (for example "# ${MARK} fleet")`,
    path: ['marker'],
  });

const hostVariableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name (letters, digits, _)');

const manifestSchema = z.strictObject({
  /** The host variables the sources may use (`{{ host.NAME }}`); any other fails the render. */
  hostVariables: z.array(hostVariableName).max(64).default([]),
  files: z.array(entrySchema).max(256).default([]),
});

export type FilesEntry = z.infer<typeof entrySchema>;

/** The begin and end lines of a marker template. */
export function markersOf(template: string): { begin: string; end: string } {
  return { begin: template.replace(MARK, 'BEGIN'), end: template.replace(MARK, 'END') };
}

function invalid(source: string, problems: Problem[]): FleetError {
  return new FleetError(
    'FILES_MANIFEST_INVALID',
    `${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`,
    { problems, suggestions: ['fix the entries named, then run fleet validate'] },
  );
}

/**
 * Two entries that would be one file, or a file and a directory above it, on some host: refused
 * before anything is written (chezmoi reports such a source state as inconsistent; fleet's install
 * would otherwise replace the first entry's directory half-way and roll back). Each pair is named
 * once, at the later entry's path.
 */
function overlapProblems(
  entries: readonly Pick<FilesEntry, 'path'>[],
  source: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): Problem[] {
  const problems: Problem[] = [];
  entries.forEach((entry, index) => {
    for (let earlier = 0; earlier < index; earlier += 1) {
      const other = (entries[earlier] as Pick<FilesEntry, 'path'>).path;
      const overlap = homePathOverlap(entry.path, other);
      if (overlap === null) continue;
      const line = lineOf(['files', index, 'path']);
      problems.push({
        file: source,
        ...(line === undefined ? {} : { line }),
        path: `files[${index}].path`,
        message: overlapMessage(entry.path, other, earlier, overlap),
      });
      break;
    }
  });
  return problems;
}

function overlapMessage(
  path: string,
  other: string,
  index: number,
  overlap: 'same' | 'parent' | 'child',
): string {
  if (overlap === 'same' && path === other) return `${path} is already entry ${index}`;
  if (overlap === 'same') {
    return `${path} is the same file as entry ${index} (${other}) where names ignore case or Unicode normalisation (macOS, Windows)`;
  }
  return overlap === 'parent'
    ? `${path} is a directory above entry ${index} (${other}): a path cannot be both a file and a directory`
    : `${path} is inside entry ${index} (${other}), which is a file: a path cannot be both a file and a directory`;
}

/** The managed files and host variables `text` declares; throws `FILES_MANIFEST_INVALID`. */
export function parseFilesManifest(
  text: string,
  source: string,
): { files: ManagedFile[]; hostVariables: string[] } {
  const parsed = parseYaml(text, source, 'FILES_MANIFEST_INVALID');
  const result = manifestSchema.safeParse(parsed.value ?? {});
  if (!result.success) throw invalid(source, zodProblems(result.error, source, parsed.lineOf));
  const problems = overlapProblems(result.data.files, source, parsed.lineOf);
  if (problems.length > 0) throw invalid(source, problems);
  const files = result.data.files.map((entry): ManagedFile => ({
    id: entry.path,
    path: entry.path,
    canonical: entry.source,
    kind: entry.kind,
    format: 'text',
    ...(entry.marker === undefined ? {} : { markers: markersOf(entry.marker) }),
    ...(entry.mode === undefined ? {} : { mode: entry.mode }),
    ...(entry.action === undefined ? {} : { action: entry.action }),
    ...(entry.template ? {} : { template: false as const }),
  }));
  return { files, hostVariables: result.data.hostVariables };
}
