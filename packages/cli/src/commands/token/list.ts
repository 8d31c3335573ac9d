import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, openStore, timeoutFlag } from '../../node-home.js';

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
  /** With --host: the id of the token the request was made with (your own for the host). */
  readonly self?: string;
}

export default class TokenList extends FleetCommand {
  static override summary =
    "List the tokens of this node's token store (never the tokens themselves).";
  static override description =
    "On the node (--home) from its own token store; from the operator seat (--host H) through H's controller (needs node-admin:tokens), marking the token your credentials file holds for H.";
  static override examples = [
    '<%= config.bin %> token list',
    '<%= config.bin %> token list --home /srv/node --json',
    '<%= config.bin %> token list --host node-01',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = { home: homeFlag, host: hostFlag, timeout: timeoutFlag };

  async run(): Promise<TokenListJson> {
    const { flags } = await this.parse(TokenList);
    let tokens: TokenListJson['tokens'];
    let self: string | undefined;
    if (flags.host !== undefined) {
      const { remoteTokens } = await import('@fleet/operator/tokens/remote.js');
      const remote = await remoteTokens(await this.findRepo(flags.repo), flags.host, flags.timeout);
      const answer = await remote.client.tokenList();
      ({ tokens, self } = answer);
    } else {
      const { tokenState } = await import('@fleet/controller');
      const store = await openStore(flags.home);
      const now = new Date();
      tokens = (await store.list()).map((record) => {
        const { sha256, ...shown } = record;
        void sha256; // the hash is not shown: nothing the operator needs
        return { ...shown, state: tokenState(record, now) };
      });
    }
    if (tokens.length === 0) this.log('No tokens. Issue one with `fleet token issue`.');
    if (tokens.length > 0) {
      const { renderTable } = await import('../../table.js');
      const rows = tokens.map((token) => [
        token.id,
        token.client,
        token.state,
        token.expiresAt ?? '-',
        token.scopes.join(','),
        token.id === self ? '(this token)' : '',
      ]);
      const palette = await this.palette();
      const header = ['ID', 'CLIENT', 'STATE', 'EXPIRES', 'SCOPES', ''];
      const stateColumn = header.indexOf('STATE');
      for (const line of renderTable(header, rows, (cell, column) =>
        column === stateColumn ? palette.state(cell) : cell,
      ))
        this.log(line);
    }
    return self === undefined ? { tokens } : { tokens, self };
  }
}
