import { Args } from '@oclif/core';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, openStore } from '../../node-home.js';

export interface RevokedTokenJson {
  readonly id: string;
  readonly client: string;
  readonly revokedAt: string;
}

export default class TokenRevoke extends FleetCommand {
  static override summary =
    'Revoke a token: refused (AUTH_REVOKED) by every request that starts after this returns.';
  static override examples = [
    '<%= config.bin %> token revoke 0123456789abcdef',
    '<%= config.bin %> token revoke 0123456789abcdef --home /srv/node --json',
  ];
  static override args = {
    id: Args.string({ description: 'the id of the token to revoke', required: true }),
  };
  static override flags = { home: homeFlag };

  async run(): Promise<RevokedTokenJson> {
    const { args, flags } = await this.parse(TokenRevoke);
    const store = await openStore(flags.home);
    const record = await store.revoke(args.id);
    this.log(`Revoked token ${record.id} (${record.client}) at ${record.revokedAt}.`);
    return { id: record.id, client: record.client, revokedAt: record.revokedAt as string };
  }
}
