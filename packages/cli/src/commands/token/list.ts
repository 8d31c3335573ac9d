import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, openStore, timeoutFlag } from '../../node-home.js';
import { issuerText, lineageText, listWithLineage } from '@fleet/operator/tokens/lineage.js';
import { remoteTokens } from '@fleet/operator/tokens/remote.js';
import { renderTable } from '../../table.js';

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
    /**
     * The token that minted it through a controller; `null`: issued on the node (over SSH, by
     * enrollment or --home) by its operator; absent: the node predates lineage.
     */
    readonly issuedBy?: string | null;
    /** The minters above it, nearest first (absent: the node predates lineage). */
    readonly lineage?: readonly string[];
  }[];
  /** With --host: the id of the token the request was made with (your own for the host). */
  readonly self?: string;
}

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
    let tokens: TokenListJson['tokens'];
    let self: string | undefined;
    if (flags.host !== undefined) {
      const remote = await remoteTokens(await this.findRepo(flags.repo), flags.host, flags.timeout);
      const answer = await listWithLineage(remote.client);
      ({ tokens, self } = answer);
      if (!answer.lineage)
        this.note(`${flags.host} predates token lineage: the issuer of its tokens is unknown`);
    } else {
      // Lazy: only the local branch needs the controller (packages/cli/README.md, Lazy imports kept).
      const { lineageOf, tokenState } = await import('@fleet/controller');
      const store = await openStore(flags.home);
      const now = new Date();
      const records = await store.list();
      tokens = records.map((record) => {
        const { sha256, issuedBy, ...shown } = record;
        void sha256; // the hash is not shown: nothing the operator needs
        return {
          ...shown,
          state: tokenState(record, now),
          issuedBy: issuedBy ?? null,
          lineage: lineageOf(records, record.id),
        };
      });
    }
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
