import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import type { IssuedTokenJson } from './issue.js';
import { homeFlag, hostFlag, openStore, timeoutFlag } from '../../node-home.js';
import { parseDuration } from '@fleet/controller';
import { FleetError } from '@fleet/core';
import { recordTokenVerb, remoteTokens, rotateRemote } from '@fleet/operator/tokens/remote.js';

export interface RotatedTokenJson extends IssuedTokenJson {
  readonly rotatedFrom: string;
  /** Until when the old token is still accepted. */
  readonly graceUntil: string;
  /** With --host: whether the credentials file now holds the new token (it was the operator's own). */
  readonly credentialsUpdated?: boolean;
}

export default class TokenRotate extends FleetCommand {
  static override summary = 'Replace a token with a new one for the same client and scopes.';
  static override description = `The old token stays valid for the grace period (default 10m) so the operator can switch credentials; then it is refused (AUTH_EXPIRED). The new token is shown once.

On the node (--home) it works on the node's own token store. From the operator seat (--host H) it goes through H's controller with your credentials file's token for H, which needs node-admin:tokens; without an ID it rotates that very token and writes the new one into the credentials file atomically (0600; a file readable by others is refused), so the next command already uses it. Rotating another client's token prints the new one for you to hand over, and is refused (exit 4) when that token has a scope yours lacks.

Through a controller the new token is your token's: it never expires after your token does, and revoking yours revokes it (fleet token list shows the lineage). A token in its rotation grace administers no tokens. To extend a lifetime, issue a new token on the node, over SSH.`;
  static override examples = [
    '<%= config.bin %> token rotate 0123456789abcdef',
    '<%= config.bin %> token rotate 0123456789abcdef --grace 1h --json',
    '<%= config.bin %> token rotate --host node-01',
    '<%= config.bin %> token rotate 0123456789abcdef --host node-01 --grace 30m --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    id: Args.string({
      description:
        'the id of the token to rotate (with --host: default, your own token for the host)',
    }),
  };
  static override flags = {
    grace: Flags.string({ description: 'how long the old token stays valid', default: '10m' }),
    ttl: Flags.string({ description: "the new token's lifetime (default: the old one's)" }),
    home: homeFlag,
    host: hostFlag,
    timeout: timeoutFlag,
  };

  async run(): Promise<RotatedTokenJson> {
    const { args, flags } = await this.parse(TokenRotate);
    if (flags.host !== undefined) return this.rotateThroughController(flags.host, args.id, flags);
    if (args.id === undefined) {
      throw new FleetError('USAGE', 'name the token to rotate (fleet token list shows the ids)');
    }
    const store = await openStore(flags.home);
    const { record, token, previous } = await store.rotate(args.id, {
      graceMs: parseDuration(flags.grace),
      ...(flags.ttl === undefined ? {} : { ttlMs: parseDuration(flags.ttl) }),
    });
    this.log(
      `Rotated ${previous.id} → ${record.id}; the old token is accepted until ${previous.graceUntil}.`,
    );
    this.log('The new token is shown once and stored only as a hash:');
    this.log(token);
    return {
      id: record.id,
      token,
      client: record.client,
      scopes: record.scopes,
      expiresAt: record.expiresAt,
      rotatedFrom: previous.id,
      graceUntil: previous.graceUntil as string,
    };
  }

  private async rotateThroughController(
    host: string,
    id: string | undefined,
    flags: { repo?: string; grace: string; ttl?: string; timeout: number },
  ): Promise<RotatedTokenJson> {
    const root = await this.findRepo(flags.repo);
    const remote = await remoteTokens(root, host, flags.timeout);
    const rotated = await rotateRemote(remote, id, {
      graceMs: parseDuration(flags.grace),
      ...(flags.ttl === undefined ? {} : { ttlMs: parseDuration(flags.ttl) }),
      note: (line) => this.note(line),
    });
    const { issued } = rotated;
    await recordTokenVerb(
      'token rotate',
      host,
      rotated.operationId,
      `${issued.rotatedFrom ?? ''} -> ${issued.id}${rotated.credentialsUpdated ? ', credentials file updated' : ''}`,
      [issued.token],
    );
    this.log(
      `Rotated ${issued.rotatedFrom ?? ''} → ${issued.id} on ${host}, expiring ${issued.expiresAt}; the old token is accepted until ${issued.graceUntil ?? ''}.`,
    );
    if (rotated.credentialsUpdated) {
      this.log(`${remote.credentialsPath} now holds the new token for ${host}.`);
    }
    this.log('The new token is shown once and stored on the node only as a hash:');
    this.log(issued.token);
    return {
      id: issued.id,
      token: issued.token,
      client: issued.client,
      scopes: issued.scopes,
      expiresAt: issued.expiresAt,
      rotatedFrom: issued.rotatedFrom as string,
      graceUntil: issued.graceUntil as string,
      credentialsUpdated: rotated.credentialsUpdated,
    };
  }
}
