/**
 * `fleet config adopt HOST PATH` (contract §8.5), the reverse arrow: a file captured on a node
 * (redacted there) becomes a canonical candidate in `mirror/<host>/<domain>/<file>` — host
 * variable values reverse-substituted to their placeholders, scanned for anything that still looks
 * like a credential — and is committed with its provenance in trailers. `--promote` writes it over
 * the canonical file too, in the same commit (`promote.ts` decides whether it may); `--dry-run`
 * shows that commit (files, diffs, message) and writes nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FleetError } from '../errors.js';
import { unifiedDiff } from '../diff.js';
import { identityArgs, type Git } from '../git.js';
import type { Adopter, Capture } from '../interfaces/adopter.js';
import type { DomainDeclaration, ManagedFile } from '../interfaces/domain.js';
import { parseRepoPath } from '../paths.js';
import { nodePathFor } from '../render/views.js';
import {
  escapeLiteralBraces,
  reverseSubstitute,
  secretNames,
  type ReverseResult,
} from '../render/template.js';
import { hostEntry, hostVariables, type FleetRepo } from '../repo/load.js';
import { linkOnWay, resolveWorkingPath } from '../repo/sources.js';
import { scanForSecrets, type SecretFinding } from '../secrets/scan.js';

/** The managed file of a host at a node path, or `PATH_NOT_MANAGED` (exit 7). */
export function managedFileAt(
  repo: FleetRepo,
  host: string,
  path: string,
  declarations: ReadonlyMap<string, DomainDeclaration>,
): { declaration: DomainDeclaration; file: ManagedFile } {
  const variables = hostVariables(repo, host);
  for (const name of hostEntry(repo, host).domains) {
    const declaration = declarations.get(name);
    for (const file of declaration?.files ?? []) {
      if (declaration && nodePathFor(file, variables, `hosts/${host}.yaml`) === path)
        return { declaration, file };
    }
  }
  throw new FleetError('PATH_NOT_MANAGED', `${path} is not a managed file of host ${host}`);
}

export interface AdoptCandidate {
  readonly mirrorPath: string;
  readonly content: string;
  readonly substitutions: Readonly<Record<string, number>>;
  /** Secret-scan findings the operator allowed by line number. */
  readonly allowed: readonly SecretFinding[];
}

/**
 * Pure: the canonical candidate of a capture, or the refusal. A finding on a line the operator
 * did not allow refuses with `SECRET_FOUND` (exit 7), naming lines and rules, never values.
 */
export function adoptCandidate(input: {
  readonly host: string;
  readonly declaration: DomainDeclaration;
  readonly file: ManagedFile;
  readonly capture: Capture;
  readonly variables: Readonly<Record<string, string>>;
  readonly adopter?: Adopter | undefined;
  readonly allowSecretLines?: readonly number[];
}): AdoptCandidate {
  const { declaration, file, capture, adopter } = input;
  let raw: string;
  if (adopter) raw = adopter.candidate(file, capture);
  else if (file.kind === 'whole') raw = capture.content;
  else {
    throw new FleetError(
      'DOMAIN_BEHAVIOUR_ABSENT',
      `domain ${declaration.domain} has no adopter to take the block out of ${capture.path}`,
    );
  }
  const allowedVariables = Object.fromEntries(
    Object.entries(input.variables).filter(([name]) => declaration.hostVariables.includes(name)),
  );
  checkNoRedactedLiteral(file, input.capture, raw);
  const { content, substitutions } = sourceOfCapture(file, raw, allowedVariables);
  const findings = scanForSecrets(content);
  const allowLines = new Set(input.allowSecretLines ?? []);
  const refused = findings.filter((finding) => !allowLines.has(finding.line));
  if (refused.length > 0) {
    throw new FleetError(
      'SECRET_FOUND',
      `refused: ${capture.path} still holds what looks like a credential on line${refused.length > 1 ? 's' : ''} ${refused
        .map((f) => `${f.line} (${f.rule})`)
        .join(
          ', ',
        )}; move it to the node's env-file chain and refer to it as {{ secret.NAME }}, or allow the line with --allow-secret-line`,
      { suggestions: refused.map((f) => `--allow-secret-line ${f.line}`) },
    );
  }
  const expectedPrefix = `mirror/${input.host}/${declaration.domain}/`;
  const mirrorPath = adopter ? adopter.mirrorPath(file, capture) : `${expectedPrefix}${file.id}`;
  parseRepoPath(mirrorPath);
  if (!mirrorPath.startsWith(expectedPrefix)) {
    throw new FleetError(
      'PATH_INVALID',
      `adopter placed ${capture.path} at ${mirrorPath}, outside ${expectedPrefix}`,
    );
  }
  return {
    mirrorPath,
    content,
    substitutions,
    allowed: findings.filter((f) => allowLines.has(f.line)),
  };
}

/**
 * Refuses (`SECRET_FOUND`, exit 7) to adopt a `template: false` entry's text where the node
 * redacted a secret's value to `{{ secret.NAME }}` (contract §8.5): such an entry is installed as
 * it is, so the placeholder would become literal text on every host — and the value itself must
 * never enter git. Only a template can carry a secret. Text the node did not redact is taken as it
 * is, a literal `{{ secret.NAME }}` included.
 */
export function checkNoRedactedLiteral(
  file: Pick<ManagedFile, 'template'>,
  capture: Pick<Capture, 'path' | 'redacted'>,
  raw: string,
): void {
  if (file.template !== false || capture.redacted === false) return;
  const names = secretNames(raw);
  if (names.length === 0) return;
  const which = `secret${names.length === 1 ? '' : 's'} ${names.join(', ')}`;
  throw new FleetError(
    'SECRET_FOUND',
    `refused: ${capture.path} holds the value of ${which} (redacted by the node), and its entry has template: false, which would install {{ secret.NAME }} as text and cannot carry a secret: drop template: false from the entry (adopt then escapes its literal braces) and adopt again, or take the secret out of the file`,
  );
}

/**
 * The source a captured text becomes, so that it renders back to that text (contract §8.5,
 * §10.4): an entry with `template: false` is copied as it is — its braces are text and no host
 * value becomes a placeholder; a template has each literal `{{` escaped (`{{ "{{" }}`, the
 * language's own escape) before host values are reverse-substituted, so adopt → plan is current.
 */
export function sourceOfCapture(
  file: Pick<ManagedFile, 'template'>,
  raw: string,
  variables: Readonly<Record<string, string>>,
): ReverseResult {
  if (file.template === false) return { content: raw, substitutions: {} };
  return reverseSubstitute(escapeLiteralBraces(raw), variables);
}

/**
 * The commit message of an adoption: the operator's words, then the four provenance trailers —
 * and for a promotion, the canonical file it rewrote and the hosts whose drift was accepted.
 */
export function adoptMessage(input: {
  readonly message: string;
  readonly host: string;
  readonly operationId: string;
  readonly capture: Capture;
  readonly promotedTo?: string;
  readonly acceptedDriftOn?: readonly string[];
}): string {
  const subject = input.message.trim().replace(/\n{3,}/g, '\n\n');
  return [
    subject,
    '',
    `Fleet-Adopted-From: ${input.host}:${input.capture.path}`,
    `Fleet-Live-Sha256: ${input.capture.sha256}`,
    `Fleet-Operation: ${input.operationId}`,
    `Fleet-Controller: ${input.capture.controller}`,
    ...(input.promotedTo === undefined ? [] : [`Fleet-Promoted-To: ${input.promotedTo}`]),
    ...(input.acceptedDriftOn && input.acceptedDriftOn.length > 0
      ? [`Fleet-Accepted-Drift: ${[...input.acceptedDriftOn].sort().join(', ')}`]
      : []),
    '',
  ].join('\n');
}

/** One file an adoption writes: the mirror candidate, and for `--promote` the canonical. */
export interface RepoWrite {
  readonly path: string;
  readonly content: string;
}

/** What `adopt --dry-run` shows: the commit's files with their diffs against HEAD, and message. */
export interface AdoptionPreview {
  readonly files: readonly { readonly path: string; readonly diff: string }[];
  readonly message: string;
}

/** The commit an adoption would make (reads HEAD, writes nothing). */
export async function previewAdoption(input: {
  readonly git: Git;
  readonly writes: readonly RepoWrite[];
  readonly message: string;
}): Promise<AdoptionPreview> {
  const files = [];
  for (const write of input.writes) {
    const head = await input.git.run(['show', `HEAD:${write.path}`], { allowFailure: true });
    const before = head.exitCode === 0 ? head.stdout : '';
    files.push({
      path: write.path,
      diff:
        unifiedDiff(before, write.content, {
          from: head.exitCode === 0 ? `a/${write.path}` : '/dev/null',
          to: `b/${write.path}`,
        }) || '(unchanged)',
    });
  }
  return { files, message: input.message };
}

/**
 * The repository path `--promote` writes for `canonical`: the file a symbolic link in the
 * repository leads to — its own link, or a linked directory above it — as drift reads it
 * (`repo/sources.ts`), so the link stays a link and its target gets the new text. A link that
 * leaves the repository, loops or chains too long is `PROMOTE_REFUSED`: fleet never writes
 * outside the repository, and never replaces the link with a file.
 */
export function promotionWritePath(root: string, canonical: string): string {
  try {
    return resolveWorkingPath(root, canonical);
  } catch (error) {
    if (!(error instanceof FleetError) || error.code !== 'RENDER_FAILED') throw error;
    throw new FleetError(
      'PROMOTE_REFUSED',
      `refused: ${error.message}; --promote writes a linked source's target only within the repository: adopt without --promote and edit the target by hand`,
    );
  }
}

/**
 * Refuses (`SYMLINK_REFUSED`, exit 7) a write whose path has a symbolic link on its way: a write
 * there would follow the link (perhaps out of the repository) or `git add` would refuse the path
 * beyond it. `--promote` names a link's target ({@link promotionWritePath}), never the link.
 */
export function checkNoLinkOnWay(root: string, path: string): void {
  const link = linkOnWay(root, path);
  if (link === null) return;
  throw new FleetError(
    'SYMLINK_REFUSED',
    `${path}: ${link} is a symbolic link in the fleet repository: adopt never writes through a link nor replaces one with a file`,
  );
}

/**
 * Refuses (`REPO_DIRTY`, exit 3) when a path adopt writes (the mirror path, and the canonical for
 * `--promote`) has changes staged or uncommitted: adopt must neither commit someone's staged work
 * nor overwrite an uncommitted edit.
 */
export async function checkMirrorPathClean(git: Git, mirrorPath: string): Promise<void> {
  const status = await git.run([
    'status',
    '--porcelain',
    '--untracked-files=all',
    '--',
    mirrorPath,
  ]);
  if (status.stdout.trim() !== '') {
    throw new FleetError(
      'REPO_DIRTY',
      `${mirrorPath} has uncommitted changes in the fleet repository: commit or discard them, then adopt again`,
    );
  }
}

/**
 * Every check an adoption's writes pass before anything is written — no symbolic link on a path's
 * way (`SYMLINK_REFUSED`), every path clean (`REPO_DIRTY`) — shared by the commit and by
 * `--dry-run`, which so refuses exactly what the real run refuses (contract §8.5).
 */
export async function checkAdoptionWrites(
  git: Git,
  root: string,
  paths: readonly string[],
): Promise<void> {
  for (const path of paths) checkNoLinkOnWay(root, path);
  for (const path of paths) await checkMirrorPathClean(git, path);
}

/**
 * Writes the candidate (and, for `--promote`, the canonical: `also`) and commits those paths only;
 * returns the new commit, or `null` when the repo already holds exactly this (nothing to commit:
 * the repo already admits it). Every path is checked clean before anything is written.
 */
export async function commitAdoption(input: {
  readonly git: Git;
  readonly root: string;
  readonly candidate: AdoptCandidate;
  readonly message: string;
  readonly also?: readonly RepoWrite[];
}): Promise<string | null> {
  const { git, candidate } = input;
  const writes: RepoWrite[] = [
    { path: candidate.mirrorPath, content: candidate.content },
    ...(input.also ?? []),
  ];
  const paths = writes.map((write) => write.path);
  await checkAdoptionWrites(git, input.root, paths);
  for (const write of writes) {
    const absolute = join(input.root, ...parseRepoPath(write.path));
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, write.content);
  }
  await git.run(['add', '--', ...paths]);
  const unchanged = await git.run(['diff', '--cached', '--quiet', '--', ...paths], {
    allowFailure: true,
  });
  if (unchanged.exitCode === 0) return null;
  // `commit -- PATH` commits that path only: whatever else the operator has staged stays staged.
  await git.run(
    [
      ...(await identityArgs(git)),
      'commit',
      '--quiet',
      '--cleanup=verbatim',
      '-F',
      '-',
      '--',
      ...paths,
    ],
    {
      input: input.message,
    },
  );
  return (await git.run(['rev-parse', 'HEAD'])).stdout.trim();
}
