import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, openStore, timeoutFlag } from '../../node-home.js';

export interface RevokedTokenJson {
  readonly id: string;
  readonly client: string;
  readonly revokedAt: string;
  /** With --host: it was the operator's own token for the host (revoked with --self). */
  readonly self?: boolean;
}

export default class TokenRevoke extends FleetCommand {
  static override summary =
    'Revoke a token: refused (AUTH_REVOKED) by every request that starts after this returns.';
  static override description = `On the node (--home) it works on the node's own token store. From the operator seat (--host H) it goes through H's controller with your credentials file's token for H, which needs node-admin:tokens.

Revoking the token your credentials file holds for H would lock you out of H: it is refused (exit 2, nothing sent) unless you pass --self — rotate it instead. The node refuses it too (exit 3) when a request does not say so. After --self, the credentials file still holds the revoked token: put a token issued on the node there.`;
  static override examples = [
    '<%= config.bin %> token revoke 0123456789abcdef',
    '<%= config.bin %> token revoke 0123456789abcdef --home /srv/node --json',
    '<%= config.bin %> token revoke 0123456789abcdef --host node-01',
    '<%= config.bin %> token revoke 0123456789abcdef --host node-01 --self   # your own token for node-01',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    id: Args.string({ description: 'the id of the token to revoke', required: true }),
  };
  static override flags = {
    home: homeFlag,
    host: hostFlag,
    self: Flags.boolean({
      description:
        'with --host: revoke it even though it is your own token for the host (you lose access)',
      default: false,
    }),
    timeout: timeoutFlag,
  };

  async run(): Promise<RevokedTokenJson> {
    const { args, flags } = await this.parse(TokenRevoke);
    if (flags.host !== undefined) {
      const { checkRevoke, recordTokenVerb, remoteTokens } =
        await import('@fleet/operator/tokens/remote.js');
      const { newOperationId } = await import('@fleet/core');
      const remote = await remoteTokens(await this.findRepo(flags.repo), flags.host, flags.timeout);
      await checkRevoke(remote, args.id, flags.self);
      const operationId = newOperationId();
      const revoked = await remote.client.tokenRevoke({
        operationId,
        id: args.id,
        self: flags.self,
      });
      await recordTokenVerb('token revoke', flags.host, operationId, `revoked ${revoked.id}`, []);
      this.log(
        `Revoked token ${revoked.id} (${revoked.client}) on ${flags.host} at ${revoked.revokedAt}.`,
      );
      if (revoked.self) {
        this.note(
          `warning: ${remote.credentialsPath} still holds this revoked token for ${flags.host}: every request to ${flags.host} is refused until you put a new one there (fleet token issue on the node)`,
        );
      }
      return {
        id: revoked.id,
        client: revoked.client,
        revokedAt: revoked.revokedAt,
        self: revoked.self,
      };
    }
    const store = await openStore(flags.home);
    const record = await store.revoke(args.id);
    this.log(`Revoked token ${record.id} (${record.client}) at ${record.revokedAt}.`);
    return { id: record.id, client: record.client, revokedAt: record.revokedAt as string };
  }
}
