import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, openStore, timeoutFlag } from '../../node-home.js';
import { checkRevoke, recordTokenVerb, remoteTokens } from '@fleet/operator/tokens/remote.js';
import { revokeWithMinted } from '@fleet/operator/tokens/lineage.js';
import { newOperationId } from '@fleet/core';

export interface RevokedTokenJson {
  readonly id: string;
  readonly client: string;
  readonly revokedAt: string;
  /** With --host: it was the operator's own token for the host (revoked with --self). */
  readonly self?: boolean;
  /** The tokens minted from it (transitively) revoked with it (absent: the node predates lineage). */
  readonly minted?: readonly string[];
}

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
    if (flags.host !== undefined) {
      const remote = await remoteTokens(await this.findRepo(flags.repo), flags.host, flags.timeout);
      checkRevoke(remote, args.id, flags.self);
      const operationId = newOperationId();
      const revoked = await revokeWithMinted(remote.client, {
        operationId,
        id: args.id,
        self: flags.self,
      });
      const minted = revoked.minted;
      const also = minted === undefined ? '' : `, and ${mintedText(minted)}`;
      await recordTokenVerb(
        'token revoke',
        flags.host,
        operationId,
        `revoked ${revoked.id}${also}`,
        [],
      );
      this.log(
        `Revoked token ${revoked.id} (${revoked.client}) on ${flags.host} at ${revoked.revokedAt}${also}.`,
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
        ...(minted === undefined ? {} : { minted }),
      };
    }
    const store = await openStore(flags.home);
    const { record, minted } = await store.revokeWithMinted(args.id);
    const ids = minted.map((token) => token.id);
    this.log(
      `Revoked token ${record.id} (${record.client}) at ${record.revokedAt}, and ${mintedText(ids)}.`,
    );
    return {
      id: record.id,
      client: record.client,
      revokedAt: record.revokedAt as string,
      minted: ids,
    };
  }
}

function mintedText(ids: readonly string[]): string {
  return ids.length === 0
    ? 'no token minted from it'
    : `${ids.length} token(s) minted from it: ${ids.join(', ')}`;
}
