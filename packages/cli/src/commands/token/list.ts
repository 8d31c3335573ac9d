import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, timeoutFlag, tokenTarget } from '../../node-home.js';
import { issuerText, lineageText, TokenService, type ListedTokens } from '@fleet/operator/token';
import { renderTable } from '../../table.js';

export type TokenListJson = ListedTokens;

export default class TokenList extends FleetCommand {
  static override summary =
    "List the tokens of this node's token store (never the tokens themselves).";
  static override description =
    "On the node (--home) from its own token store; from the operator seat (--host H) through H's controller (needs node-admin:tokens), marking the token your credentials file holds for H. ISSUER names the token that minted each one through a controller, or `node (SSH/operator)` for one issued on the node; LINEAGE the minters above it, nearest first. Revoking a token revokes everything in its line below it.";
  static override examples = [
    '<%= config.bin %> token list',
    '<%= config.bin %> token list --home /srv/node --json',
    '<%= config.bin %> token list --host node-01',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override flags = { home: homeFlag, host: hostFlag, timeout: timeoutFlag };

  async run(): Promise<TokenListJson> {
    const { flags } = await this.parse(TokenList);
    const target = await tokenTarget(flags, (repo) => this.findRepo(repo));
    const service = await this.service(TokenService);
    const { listed, lineage } = await service.list({ target });
    if (target.host !== undefined && !lineage)
      this.note(`${target.host} predates token lineage: the issuer of its tokens is unknown`);
    const { tokens, self } = listed;
    if (tokens.length === 0) this.log('No tokens. Issue one with `fleet token issue`.');
    if (tokens.length > 0) {
      const rows = tokens.map((token) => [
        token.id,
        token.client,
        token.state,
        token.expiresAt ?? '-',
        token.scopes.join(','),
        issuerText(token, self),
        lineageText(token),
        token.id === self ? '(this token)' : '',
      ]);
      const palette = await this.palette();
      const header = ['ID', 'CLIENT', 'STATE', 'EXPIRES', 'SCOPES', 'ISSUER', 'LINEAGE', ''];
      const stateColumn = header.indexOf('STATE');
      for (const line of renderTable(header, rows, (cell, column) =>
        column === stateColumn ? palette.state(cell) : cell,
      ))
        this.log(line);
    }
    return self === undefined ? { tokens } : { tokens, self };
  }
}
