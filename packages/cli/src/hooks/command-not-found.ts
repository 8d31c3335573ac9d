/**
 * "Did you mean …?" for a mistyped command (contract §7): oclif's `command_not_found` hook, fired
 * only on a miss — so `--help`, `--version` and every real command never load it. The answer keeps
 * fleet's contract: a usage error (`USAGE`, exit 2), one line with the closest visible command as
 * a hint, and with `--json` the error envelope on stdout and nothing else there.
 *
 * Why not `@oclif/plugin-not-found`: it exits 127 and prints plain text (also under `--json`),
 * offers its guess only in an interactive prompt — where answering yes *runs* the guessed command,
 * `--confirm` flags included — and would put `@inquirer/prompts` into every runtime artifact.
 */
import { FleetError, closestName, errorEnvelope, formatProblem } from '@fleet/core';
import { toConfiguredId } from '@fleet/core/command';
import type { Hook } from '@oclif/core';

// eslint-disable-next-line @typescript-eslint/require-await -- oclif's hook is async
const hook: Hook<'command_not_found'> = async function (options) {
  const config = options.config;
  const visible = config.commands.filter((command) => !command.hidden);
  const ids = [...visible.map((command) => command.id), ...visible.flatMap((c) => c.aliases)];
  const typed = toConfiguredId(options.id, config);
  // With a space as topic separator oclif hands over the words typed, arguments included
  // (`confg:install:node-01`): the longest prefix that is close to a command is the guess.
  const words = options.id.split(':');
  let guess: string | undefined;
  for (let k = words.length; k > 0 && guess === undefined; k -= 1) {
    guess = closestName(words.slice(0, k).join(':'), ids);
  }
  const shown = guess === undefined ? undefined : toConfiguredId(guess, config);
  const error = new FleetError('USAGE', `${config.bin} ${typed}: not a ${config.bin} command`, {
    suggestions: [
      ...(shown === undefined ? [] : [`did you mean \`${config.bin} ${shown}\`?`]),
      `see ${config.bin} --help for the commands`,
    ],
  });
  if ((options.argv ?? []).includes('--json')) {
    process.stdout.write(`${JSON.stringify(errorEnvelope(error), null, 2)}\n`);
  } else {
    process.stderr.write(`Error: ${formatProblem({ message: error.message })}\n`);
    for (const suggestion of error.suggestions) process.stderr.write(`  hint: ${suggestion}\n`);
  }
  this.exit(error.exitCode);
};

export default hook;
