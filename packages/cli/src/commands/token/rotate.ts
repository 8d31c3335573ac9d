import { Args, Flags } from '@oclif/core';
import { FleetCommand } from '../../base-command.js';
import type { IssuedTokenJson } from './issue.js';
import { homeFlag, openStore } from '../../node-home.js';

export interface RotatedTokenJson extends IssuedTokenJson {
  readonly rotatedFrom: string;
  /** Until when the old token is still accepted. */
  readonly graceUntil: string;
}

export default class TokenRotate extends FleetCommand {
  static override summary = 'Replace a token with a new one for the same client and scopes.';
  static override description =
    'The old token stays valid for the grace period (default 10m) so the operator can switch credentials; then it is refused (AUTH_EXPIRED). The new token is shown once.';
  static override examples = [
    '<%= config.bin %> token rotate 0123456789abcdef',
    '<%= config.bin %> token rotate 0123456789abcdef --grace 1h --json',
  ];
  static override args = {
    id: Args.string({ description: 'the id of the token to rotate', required: true }),
  };
  static override flags = {
    grace: Flags.string({ description: 'how long the old token stays valid', default: '10m' }),
    ttl: Flags.string({ description: "the new token's lifetime (default: the old one's)" }),
    home: homeFlag,
  };

  async run(): Promise<RotatedTokenJson> {
    const { args, flags } = await this.parse(TokenRotate);
    const { parseDuration } = await import('@fleet/controller');
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
}
