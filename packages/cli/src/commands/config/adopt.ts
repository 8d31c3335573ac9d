import { Args, Flags } from '@fleet/core/command';
import type {
  AdoptCandidate,
  Adopter,
  AdoptionPreview,
  Capture,
  DomainDeclaration,
  DomainRuntime,
  ManagedFile,
  RepoWrite,
} from '@fleet/core';
import type { FleetContext } from '@fleet/operator/config/context.js';
import { FleetCommand } from '../../base-command.js';

export interface AdoptResult {
  readonly host: string;
  readonly path: string;
  readonly domain: string;
  readonly mirrorPath: string;
  readonly operationId: string;
  readonly liveSha256: string;
  /** The new commit, or null when the mirror already held exactly this capture (or --dry-run). */
  readonly commit: string | null;
  readonly substitutions: Readonly<Record<string, number>>;
  /** With --promote: the canonical file rewritten, and the hosts whose drift was accepted. */
  readonly promoted?: { readonly canonical: string; readonly acceptedDriftOn: readonly string[] };
  /** With --dry-run: the commit that would be made (files with their diffs, message). */
  readonly dryRun?: AdoptionPreview;
}

export default class ConfigAdopt extends FleetCommand {
  static override summary =
    "Bring a host's live file into the repository (a commit with provenance).";
  static override description = `Captures the live file (redacted on the node: secret values back to {{ secret.NAME }}), replaces the host's variable values with their {{ host.NAME }} placeholders, refuses it if anything still looks like a credential (exit 7, naming line numbers, never values, unless --allow-secret-line), writes it to mirror/<host>/<domain>/<file> and commits it with the trailers Fleet-Adopted-From, Fleet-Live-Sha256, Fleet-Operation and Fleet-Controller.

Content only: a files entry's mode (contract §10.4) is never adopted — it stays what files.yaml says, and a file differing only by its mode has nothing to adopt (change the entry's mode, or let install set it back).

--promote also writes it over the canonical file in domains/ (for a block file, as the canonical's section), in the same commit (trailer Fleet-Promoted-To), so the host is current afterwards. It is refused (exit 7, PROMOTE_REFUSED) when the promoted canonical would not render back to the live file, and when another host would then render differently from its live file — every host whose view changes is read — unless you name those hosts with --accept-drift-on (trailer Fleet-Accepted-Drift); install them next.

--dry-run shows the commit it would make — files, diffs, message with trailers — and writes nothing to the repository.

Reads fleet.yaml, hosts/ and domains/ as committed at HEAD. Refuses (exit 3) when a path it writes has uncommitted changes.`;
  static override examples = [
    "<%= config.bin %> config adopt node-01 '~/.claude/CLAUDE.md'",
    '<%= config.bin %> config adopt node-01 \'~/.config/router/router.yaml\' --message "router: keep the hot fix" --allow-secret-line 12',
    "<%= config.bin %> config adopt node-01 '~/.claude/CLAUDE.md' --promote --dry-run",
    "<%= config.bin %> config adopt node-01 '~/.claude/CLAUDE.md' --promote --accept-drift-on node-02",
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    host: Args.string({ description: 'host (as in fleet.yaml)', required: true }),
    path: Args.string({
      description: "the live file, ~/-relative (quote it: '~/…')",
      required: true,
    }),
  };
  static override flags = {
    message: Flags.string({ char: 'm', description: 'commit message (default: adopt HOST:PATH)' }),
    'allow-secret-line': Flags.integer({
      description: 'accept a secret-scan finding on this line (repeatable)',
      multiple: true,
      min: 1,
    }),
    promote: Flags.boolean({
      description: 'also make it the canonical file in domains/ (the host is then current)',
      default: false,
    }),
    'accept-drift-on': Flags.string({
      description: 'with --promote: a host that may drift from it (repeatable)',
      multiple: true,
      dependsOn: ['promote'],
    }),
    'dry-run': Flags.boolean({
      description: 'show the commit it would make; write nothing',
      default: false,
    }),
    timeout: Flags.integer({ description: 'timeout in milliseconds', default: 10_000, min: 1 }),
  };

  async run(): Promise<AdoptResult> {
    const { args: given, flags } = await this.parse(ConfigAdopt);
    const args = { ...given, path: await this.nodePath(given.path) };
    const root = await this.findRepo(flags.repo);
    const core = await import('@fleet/core');
    const { loadFleetContext } = await import('@fleet/operator/config/context.js');
    const registry = await this.loadRegistry();
    const context = await loadFleetContext({ root, registry, timeoutMs: flags.timeout });
    const declarations = new Map(
      [...context.domains].map(([name, runtime]) => [name, runtime.declaration]),
    );
    const { declaration, file } = core.managedFileAt(
      context.repo,
      args.host,
      args.path,
      declarations,
    );
    let adopter;
    try {
      adopter = await registry.adopter(declaration.domain);
    } catch (error) {
      if (!core.isFleetError(error) || error.code !== 'DOMAIN_BEHAVIOUR_ABSENT') throw error;
    }
    const operationId = core.newOperationId();
    const log = (
      outcome: 'ok' | 'unchanged' | 'refused' | 'failed' | 'unreachable',
      code: string | null,
      exitCode: number,
      detail: string,
    ) =>
      core.recordOperatorVerb({
        verb: 'config adopt',
        host: args.host,
        operationId,
        domain: declaration.domain,
        // The commit adopt read at; the commit it makes is in the detail (contract §8.5).
        repoCommit: context.source.commit,
        paths: [args.path],
        outcome,
        code,
        exitCode,
        detail,
      });
    try {
      const { adoptModeNote, liveModeFor } = await import('@fleet/operator/config/adopt-mode.js');
      // Asked beside the capture, only for a whole file whose entry declares a mode.
      const liveMode = liveModeFor(context, args.host, declaration.domain, file, args.path);
      const capture = await context.client(args.host).capture({ operationId, path: args.path });
      const candidate = core.adoptCandidate({
        host: args.host,
        declaration,
        file,
        capture: { ...capture, host: args.host },
        variables: core.hostVariables(context.repo, args.host),
        adopter,
        allowSecretLines: flags['allow-secret-line'] ?? [],
      });
      const accepted = [...new Set(flags['accept-drift-on'] ?? [])];
      for (const host of accepted) core.hostEntry(context.repo, host);
      const promoted = flags.promote
        ? await this.promotion({
            core,
            context,
            declaration,
            file,
            adopter,
            capture,
            candidate,
            accepted,
            host: args.host,
            root,
          })
        : undefined;
      const message = core.adoptMessage({
        message: flags.message ?? `adopt ${args.host}:${args.path}${promoted ? ' (promoted)' : ''}`,
        host: args.host,
        operationId,
        capture,
        ...(promoted ? { promotedTo: promoted.write.path, acceptedDriftOn: accepted } : {}),
      });
      const also = promoted ? [promoted.write] : [];
      const result = {
        host: args.host,
        path: args.path,
        domain: declaration.domain,
        mirrorPath: candidate.mirrorPath,
        operationId,
        liveSha256: capture.sha256,
        substitutions: candidate.substitutions,
        ...(promoted
          ? { promoted: { canonical: promoted.write.path, acceptedDriftOn: accepted } }
          : {}),
      };
      if (flags['dry-run']) {
        const writes = [{ path: candidate.mirrorPath, content: candidate.content }, ...also];
        const preview = await this.preview(core, context, root, writes, message);
        await log('unchanged', null, 0, 'dry run: nothing written');
        return { ...result, commit: null, dryRun: preview };
      }
      const commit = await core.commitAdoption({
        git: context.git,
        root,
        candidate,
        message,
        also,
      });
      await log(
        commit ? 'ok' : 'unchanged',
        null,
        0,
        commit ? `committed ${commit}` : 'the repository already held this capture',
      );
      this.log(
        commit
          ? `Adopted ${args.host}:${args.path} as ${candidate.mirrorPath}${promoted ? ` and ${promoted.write.path}` : ''} (commit ${commit.slice(0, 12)}).`
          : `${candidate.mirrorPath}${promoted ? ` and ${promoted.write.path}` : ''} already hold exactly this capture: nothing to commit.`,
      );
      // Said only when the live mode differs from the entry's (issue 35).
      const modeNote = adoptModeNote(args.path, file, await liveMode);
      if (modeNote !== null) this.note(modeNote);
      return { ...result, commit };
    } catch (error) {
      const failure = core.asFleetError(error);
      const refused =
        failure.exitCode === core.ExitCode.policy || failure.exitCode === core.ExitCode.conflict;
      await log(
        failure.code === 'HOST_UNREACHABLE' ? 'unreachable' : refused ? 'refused' : 'failed',
        failure.code,
        failure.exitCode,
        failure.message,
      );
      throw error;
    }
  }

  /**
   * `--dry-run`: the commit adopt would make, shown, after the very checks the commit makes (no
   * link on a write's way, every path clean), so it refuses what the real run refuses; nothing
   * written.
   */
  private async preview(
    core: typeof import('@fleet/core'),
    context: FleetContext,
    root: string,
    writes: readonly RepoWrite[],
    message: string,
  ): Promise<AdoptionPreview> {
    await core.checkAdoptionWrites(
      context.git,
      root,
      writes.map((write) => write.path),
    );
    const preview = await core.previewAdoption({ git: context.git, writes, message });
    if (!this.jsonEnabled()) this.log(renderPreview(preview, core.escapeControl));
    return preview;
  }

  /**
   * The canonical file `--promote` writes, once checked: it must render back to the host's live
   * file, and every other host it changes must then equal its own live file, or be accepted.
   */
  private async promotion(input: {
    core: typeof import('@fleet/core');
    context: FleetContext;
    declaration: DomainDeclaration;
    file: ManagedFile;
    adopter: Adopter | undefined;
    capture: Capture;
    candidate: AdoptCandidate;
    accepted: readonly string[];
    host: string;
    /** The repository's working tree: a linked source is written at its target there. */
    root: string;
  }): Promise<{ write: RepoWrite }> {
    const { core, context, declaration, file } = input;
    const canonical = core.canonicalPath(declaration, file);
    const snapshot = await core.readCanonicalSnapshot(
      context.git,
      core.canonicalPaths([...context.domains.values()]),
      context.source.commit,
    );
    const content = core.promotedCanonical({
      declaration,
      file,
      canonical: snapshot.atRef.get(canonical) ?? null,
      candidate: input.candidate.content,
      adopter: input.adopter,
    });
    const runtime = context.domains.get(declaration.domain) as DomainRuntime;
    const { readLiveThroughController } = await import('@fleet/operator/config/live.js');
    const check = await core.checkPromotion({
      repo: context.repo,
      domains: context.domains,
      snapshot,
      host: input.host,
      declaration,
      file,
      newCanonical: content,
      liveManaged: runtime.operator.managed(file, input.capture.content),
      readLive: readLiveThroughController(context),
    });
    const refusal = core.promotionRefusal(check, input.accepted);
    if (refusal) throw refusal;
    // A source that is a link in the repository is written at its target, never over the link.
    return { write: { path: core.promotionWritePath(input.root, canonical), content } };
  }
}

/** The commit `--dry-run` would make, for a person. */
function renderPreview(preview: AdoptionPreview, escape: (text: string) => string): string {
  const lines = ['Dry run: nothing written. The commit would be:', ''];
  for (const line of preview.message.trimEnd().split('\n')) lines.push(`    ${escape(line)}`);
  for (const file of preview.files) {
    lines.push('', `  ${escape(file.path)}`);
    for (const line of escape(file.diff).split('\n')) lines.push(`    ${line}`);
  }
  return lines.join('\n');
}
