import { Flags } from '@fleet/core/command';
import type { ApplyDocument } from '@fleet/core';
import { FleetCommand } from '../base-command.js';
import * as core from '@fleet/core';
import { ApplyService, renderApplyHost, renderApplySummary } from '@fleet/operator/apply';
import { WaitingProgress } from '../progress.js';

export default class Apply extends FleetCommand {
  static override summary =
    'Make every host look like the repository: one plan over hosts × domains (with --confirm).';
  static override description = `The fleet-wide forward arrow (contract §7). Reads fleet.yaml, hosts/ and domains/ as committed at HEAD, asks every host (or each --host) for its live files in one request, classifies them exactly as \`fleet drift\` does, and plans per file:

  install  stale or missing (with --force also diverged, modified and deleted)
  refused  diverged, modified or deleted without --force: never written
  blocked  error or unsupported: never written, whatever the flags

Without --confirm it prints the plan and exits 2: nothing is sent. With --confirm every host's installable files are installed through the same service as \`fleet config install\` (each file only if its live sha256 still equals the one planned against, after a backup, with the domain's coupled actions as the node's policy defines them), hosts concurrently with a bound, each host's line printed as it settles; a host that does not answer holds back only itself. A refused file does not stop the host's other files.

--out PLAN saves the plan (the repository commit, and every file's live sha256 and the sha256 of what would be sent); --plan PLAN --confirm installs exactly that plan, and refuses with exit 3 before sending anything when the repository moved (PLAN_MISMATCH) or any planned file's live sha256 changed (PRECONDITION_FAILED).

apply is never scheduled and never unattended. Exit 0 only when every host installed what was planned (or had nothing to install); otherwise the most urgent across hosts: 4 (credentials refused), 5 (unreachable), 6 (verification failed), 3 (something moved), 7 (refused or blocked files).`;
  static override examples = [
    '<%= config.bin %> apply',
    '<%= config.bin %> apply --confirm',
    '<%= config.bin %> apply --host node-01 --domain router --confirm --json',
    '<%= config.bin %> apply --out apply-plan.json',
    '<%= config.bin %> apply --plan apply-plan.json --confirm',
  ];
  static override repoLine = 'commit' as const; // on the commit line
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    host: Flags.string({
      description: 'only this host (repeatable)',
      multiple: true,
      exclusive: ['plan'],
    }),
    domain: Flags.string({
      description: 'only this domain (repeatable)',
      multiple: true,
      exclusive: ['plan'],
    }),
    out: Flags.string({
      description: 'save the plan to this file (never overwritten; apply it with --plan)',
      exclusive: ['plan', 'confirm'],
    }),
    plan: Flags.file({
      description: 'install exactly this saved plan (with --confirm)',
      exists: true,
    }),
    confirm: Flags.boolean({
      description: 'really install (without it: print the plan, exit 2, send nothing)',
      default: false,
    }),
    force: Flags.boolean({
      description: 'also overwrite diverged and modified files and recreate deleted ones',
      default: false,
      exclusive: ['plan'],
    }),
    concurrency: Flags.integer({ description: 'hosts worked on at once', default: 16, min: 1 }),
    timeout: Flags.integer({
      description: 'per-request timeout in milliseconds',
      default: 30_000,
      min: 1,
    }),
  };

  async run(): Promise<ApplyDocument> {
    const { flags } = await this.parse(Apply);
    const root = await this.findRepo(flags.repo);
    const palette = await this.palette();
    let progress: InstanceType<typeof WaitingProgress> | undefined;
    const service = await this.service(ApplyService);
    const document = await service.run({
      root,
      ...(flags.host ? { hosts: flags.host } : {}),
      ...(flags.domain ? { domains: flags.domain } : {}),
      ...(flags.plan ? { planFile: flags.plan } : {}),
      ...(flags.out ? { out: flags.out } : {}),
      confirm: flags.confirm,
      force: flags.force,
      concurrency: flags.concurrency,
      timeoutMs: flags.timeout,
      onSource: (source) => this.noteSource(source),
      progress: (hosts) => (progress = new WaitingProgress('apply', hosts)),
      onHost: (result) => {
        // Streamed: each host's line as it settles (contract §7), the JSON document at the end.
        if (!this.jsonEnabled()) {
          progress?.clear();
          this.log(renderApplyHost(result, core.escapeControl, palette));
        }
      },
      onWait: (line) => this.note(line),
    });
    if (!this.jsonEnabled()) this.log(renderApplySummary(document));
    if (!document.confirmed) {
      this.note(
        flags.out
          ? `plan written to ${flags.out}; nothing was sent. Install exactly it with: fleet apply --plan ${flags.out} --confirm`
          : 'nothing was sent: run again with --confirm to install, or --out PLAN to save the plan for review',
      );
    }
    process.exitCode = document.exitCode;
    return document;
  }
}
