import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, timeoutFlag, tokenTarget } from '../../node-home.js';
import { mintedText, TokenService, type RevokedToken } from '@fleet/operator/token';

export type RevokedTokenJson = RevokedToken;

export default class TokenRevoke extends FleetCommand {
  static override summary =
    'Revoke a token and every token minted from it: refused (AUTH_REVOKED) by every request that starts after this returns.';
  static override description = `On the node (--home) it works on the node's own token store. From the operator seat (--host H) it goes through H's controller with your credentials file's token for H, which needs node-admin:tokens.

Every token minted from it through a controller (directly or not: fleet token list shows the lineage) is revoked with it, and the answer says how many.

Revoking the token your credentials file holds for H (or one it was minted from) would lock you out of H: it is refused (exit 2, nothing sent) unless you pass --self — rotate it instead. The node refuses it too (exit 3) when a request does not say so. After --self, the credentials file still holds the revoked token: put a token issued on the node there.`;
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
    const target = await tokenTarget(flags, (repo) => this.findRepo(repo));
    const service = await this.service(TokenService);
    const { revoked, credentialsPath } = await service.revoke({
      target,
      id: args.id,
      self: flags.self,
    });
    if (target.host !== undefined) {
      const also = revoked.minted === undefined ? '' : `, and ${mintedText(revoked.minted)}`;
      this.log(
        `Revoked token ${revoked.id} (${revoked.client}) on ${target.host} at ${revoked.revokedAt}${also}.`,
      );
      if (revoked.self === true) {
        this.note(
          `warning: ${credentialsPath ?? ''} still holds this revoked token for ${target.host}: every request to ${target.host} is refused until you put a new one there (fleet token issue on the node)`,
        );
      }
    } else {
      this.log(
        `Revoked token ${revoked.id} (${revoked.client}) at ${revoked.revokedAt}, and ${mintedText(revoked.minted ?? [])}.`,
      );
    }
    return revoked;
  }
}
