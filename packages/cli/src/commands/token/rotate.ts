import { Args, Flags } from '@fleet/core/command';
import { FleetCommand } from '../../base-command.js';
import { homeFlag, hostFlag, timeoutFlag, tokenTarget } from '../../node-home.js';
import { parseDuration } from '@fleet/controller';
import { TokenService, type RotatedToken } from '@fleet/operator/token';

export type RotatedTokenJson = RotatedToken;

export default class TokenRotate extends FleetCommand {
  static override summary = 'Replace a token with a new one for the same client and scopes.';
  static override description = `The old token stays valid for the grace period (default 10m) so the operator can switch credentials; then it is refused (AUTH_EXPIRED). The new token is shown once.

On the node (--home) it works on the node's own token store. From the operator seat (--host H) it goes through H's controller with your credentials file's token for H, which needs node-admin:tokens; without an ID it rotates that very token and writes the new one into the credentials file atomically (0600; a file readable by others is refused), so the next command already uses it. Rotating another client's token prints the new one for you to hand over, and is refused (exit 4) when that token has a scope yours lacks.

Through a controller the new token is your token's: it never expires after your token does, and revoking yours revokes it (fleet token list shows the lineage). A token in its rotation grace administers no tokens. To extend a lifetime, issue a new token on the node, over SSH.`;
  static override examples = [
    '<%= config.bin %> token rotate 0123456789abcdef',
    '<%= config.bin %> token rotate 0123456789abcdef --grace 1h --json',
    '<%= config.bin %> token rotate --host node-01',
    '<%= config.bin %> token rotate 0123456789abcdef --host node-01 --grace 30m --json',
  ];
  static override baseFlags = { ...FleetCommand.repoFlags };
  static override args = {
    id: Args.string({
      description:
        'the id of the token to rotate (with --host: default, your own token for the host)',
    }),
  };
  static override flags = {
    grace: Flags.string({ description: 'how long the old token stays valid', default: '10m' }),
    ttl: Flags.string({ description: "the new token's lifetime (default: the old one's)" }),
    home: homeFlag,
    host: hostFlag,
    timeout: timeoutFlag,
  };

  async run(): Promise<RotatedTokenJson> {
    const { args, flags } = await this.parse(TokenRotate);
    const target = await tokenTarget(flags, (repo) => this.findRepo(repo));
    const service = await this.service(TokenService);
    const { rotated, credentialsPath } = await service.rotate({
      target,
      ...(args.id === undefined ? {} : { id: args.id }),
      graceMs: parseDuration(flags.grace),
      ...(flags.ttl === undefined ? {} : { ttlMs: parseDuration(flags.ttl) }),
      onNote: (line) => this.note(line),
    });
    if (target.host !== undefined) {
      this.log(
        `Rotated ${rotated.rotatedFrom} → ${rotated.id} on ${target.host}, expiring ${rotated.expiresAt}; the old token is accepted until ${rotated.graceUntil}.`,
      );
      if (rotated.credentialsUpdated === true) {
        this.log(`${credentialsPath ?? ''} now holds the new token for ${target.host}.`);
      }
      this.log('The new token is shown once and stored on the node only as a hash:');
    } else {
      this.log(
        `Rotated ${rotated.rotatedFrom} → ${rotated.id}; the old token is accepted until ${rotated.graceUntil}.`,
      );
      this.log('The new token is shown once and stored only as a hash:');
    }
    this.log(rotated.token);
    return rotated;
  }
}
