import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, timeoutFlag, tokenTarget } from '../../node-home.js';
import { parseDuration } from '@fleet/controller';
import { checkedScopes, TokenService, type IssuedToken } from '@fleet/operator/token';

export type IssuedTokenJson = IssuedToken;

export default class TokenIssue extends FleetCommand {
  static override summary = "Issue a per-client token on this node's token store.";
  static override description = `Scopes: config:read, config:install, config:adopt, versions:read, runtime:upgrade, node-admin:bootstrap, node-admin:tokens (exact spelling). The token is printed once; the store keeps only its sha256. Put it in the operator's credentials file for this host.

With --host H it is issued through H's controller (needs node-admin:tokens) and may only carry scopes your own token for H holds (else exit 4, nothing issued): a token administered from the operator seat never gains a privilege. It is for another client: your credentials file is not changed.`;
  static override examples = [
    '<%= config.bin %> token issue --client laptop --scope config:read --scope config:install',
    '<%= config.bin %> token issue --client ci --scope config:read --ttl 30d --home /srv/node --json',
    '<%= config.bin %> token issue --client ci --scope config:read --host node-01',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = {
    client: Flags.string({
      description: 'who the token is for (letters, digits, . _ @ -)',
      required: true,
    }),
    scope: Flags.string({
      description: 'a scope the token grants (repeat for more)',
      required: true,
      multiple: true,
    }),
    ttl: Flags.string({ description: 'lifetime (90d, 12h, 30m, …)', default: '90d' }),
    home: homeFlag,
    host: hostFlag,
    timeout: timeoutFlag,
  };

  async run(): Promise<IssuedTokenJson> {
    const { flags } = await this.parse(TokenIssue);
    const scopes = checkedScopes(flags.scope);
    const ttlMs = parseDuration(flags.ttl);
    const target = await tokenTarget(flags, (repo) => this.findRepo(repo));
    const service = await this.service(TokenService);
    const { issued, lifetimeCut } = await service.issue({
      target,
      client: flags.client,
      scopes,
      ttlMs,
    });
    if (target.host !== undefined) {
      this.log(
        `Issued token ${issued.id} for ${issued.client} on ${target.host} (${issued.scopes.join(', ')}), expires ${issued.expiresAt}.`,
      );
      if (lifetimeCut) {
        this.note(
          `its lifetime was cut to ${issued.expiresAt}, the expiry of your token for ${target.host}: a token minted through a controller never outlives the token that minted it (issue a longer one on the node, over SSH)`,
        );
      }
      this.log('The token is shown once and stored on the node only as a hash:');
    } else {
      this.log(
        `Issued token ${issued.id} for ${issued.client} (${issued.scopes.join(', ')}), expires ${issued.expiresAt}.`,
      );
      this.log('The token is shown once and stored only as a hash:');
    }
    this.log(issued.token);
    return issued;
  }
}
