import { Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, openStore, timeoutFlag } from '../../node-home.js';
import { FleetError, isScope, newOperationId } from '@fleet/core';
import { parseDuration } from '@fleet/controller';
import { recordTokenVerb, remoteTokens } from '@fleet/operator/tokens/remote.js';

export interface IssuedTokenJson {
  readonly id: string;
  readonly token: string;
  readonly client: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string;
}

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
    const bad = flags.scope.filter((scope) => !isScope(scope));
    if (bad.length > 0) {
      throw new FleetError(
        'USAGE',
        `unknown scope${bad.length > 1 ? 's' : ''} ${bad.map((s) => JSON.stringify(s)).join(', ')}`,
        {
          suggestions: [
            'scopes are spelled exactly: config:read, config:install, config:adopt, versions:read, runtime:upgrade, node-admin:bootstrap, node-admin:tokens',
          ],
        },
      );
    }
    const ttlMs = parseDuration(flags.ttl);
    if (flags.host !== undefined) {
      const remote = await remoteTokens(await this.findRepo(flags.repo), flags.host, flags.timeout);
      const operationId = newOperationId();
      const issued = await remote.client.tokenIssue({
        operationId,
        client: flags.client,
        scopes: flags.scope as never,
        ttlMs,
      });
      await recordTokenVerb(
        'token issue',
        flags.host,
        operationId,
        `issued ${issued.id} for ${issued.client}`,
        [issued.token],
      );
      this.log(
        `Issued token ${issued.id} for ${issued.client} on ${flags.host} (${issued.scopes.join(', ')}), expires ${issued.expiresAt}.`,
      );
      if (Date.parse(issued.expiresAt) < Date.now() + ttlMs - 60_000) {
        this.note(
          `its lifetime was cut to ${issued.expiresAt}, the expiry of your token for ${flags.host}: a token minted through a controller never outlives the token that minted it (issue a longer one on the node, over SSH)`,
        );
      }
      this.log('The token is shown once and stored on the node only as a hash:');
      this.log(issued.token);
      return {
        id: issued.id,
        token: issued.token,
        client: issued.client,
        scopes: issued.scopes,
        expiresAt: issued.expiresAt,
      };
    }
    const store = await openStore(flags.home);
    const { record, token } = await store.issue({
      client: flags.client,
      scopes: flags.scope as never,
      ttlMs,
    });
    this.log(
      `Issued token ${record.id} for ${record.client} (${record.scopes.join(', ')}), expires ${record.expiresAt}.`,
    );
    this.log('The token is shown once and stored only as a hash:');
    this.log(token);
    return {
      id: record.id,
      token,
      client: record.client,
      scopes: record.scopes,
      expiresAt: record.expiresAt,
    };
  }
}
