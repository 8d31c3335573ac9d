import { FleetCommand } from '../../base-command.js';
import { homeFlag, openStore } from '../../node-home.js';

export interface TokenListJson {
  readonly tokens: readonly {
    readonly id: string;
    readonly client: string;
    readonly scopes: readonly string[];
    readonly state: string;
    readonly createdAt: string;
    readonly expiresAt: string;
    readonly rotatedFrom?: string;
    readonly graceUntil?: string;
    readonly revokedAt?: string;
  }[];
}

export default class TokenList extends FleetCommand {
  static override summary =
    "List the tokens of this node's token store (never the tokens themselves).";
  static override examples = [
    '<%= config.bin %> token list',
    '<%= config.bin %> token list --home /srv/node --json',
  ];
  static override flags = { home: homeFlag };

  async run(): Promise<TokenListJson> {
    const { flags } = await this.parse(TokenList);
    const { tokenState } = await import('@fleet/controller');
    const store = await openStore(flags.home);
    const now = new Date();
    const tokens = (await store.list()).map((record) => {
      const { sha256, ...shown } = record;
      void sha256; // the hash is not shown: nothing the operator needs
      return { ...shown, state: tokenState(record, now) };
    });
    if (tokens.length === 0) this.log('No tokens. Issue one with `fleet token issue`.');
    for (const token of tokens) {
      this.log(
        [
          token.id,
          token.client,
          token.state.padEnd(7),
          token.expiresAt,
          token.scopes.join(','),
        ].join('  '),
      );
    }
    return { tokens };
  }
}
