/**
 * Host names in shell completion (issue 35). `fleet autocomplete` (@oclif/plugin-autocomplete)
 * completes commands and flags from the commands' definitions, never a value; its bash function
 * is wrapped by one that completes the value of `--host` (and `--accept-drift-on`) and a command's
 * HOST argument with the hosts of fleet.yaml, as `fleet complete-hosts` lists them (the
 * repository of `--repo` on the line, else `$FLEET_REPO` or the working directory, as every verb
 * finds it). Anything else goes to the plugin's function. Pure: the script as text.
 */

/** What the wrapper needs to know of the commands, from their definitions. */
export interface HostCompletionInput {
  /** The CLI's executable name (`fleet`). */
  readonly bin: string;
  /** The commands whose first argument is a host, as typed (`config plan`, `upgrade`). */
  readonly hostArgCommands: readonly string[];
  /** Every flag that takes a value (`--repo`, `--timeout`): the word after it is not an argument. */
  readonly valueFlags: readonly string[];
  /** The flags whose value is a host. */
  readonly hostFlags: readonly string[];
}

/** The commands, flags and names of a loaded CLI config that the wrapper needs. */
export function hostCompletionInput(config: {
  readonly bin: string;
  readonly commands: readonly {
    readonly id: string;
    readonly hidden?: boolean;
    readonly args?: Readonly<Record<string, unknown>>;
    readonly flags?: Readonly<Record<string, { readonly type?: string }>>;
  }[];
}): HostCompletionInput {
  const visible = config.commands.filter((command) => !command.hidden);
  return {
    bin: config.bin,
    hostArgCommands: visible
      .filter((command) => Object.keys(command.args ?? {})[0] === 'host')
      .map((command) => command.id.split(':').join(' '))
      .sort(),
    valueFlags: [
      ...new Set(
        visible.flatMap((command) =>
          Object.entries(command.flags ?? {})
            .filter(([, flag]) => flag.type === 'option')
            .map(([name]) => `--${name}`),
        ),
      ),
    ].sort(),
    hostFlags: ['--accept-drift-on', '--host'],
  };
}

/** The bash lines appended to the plugin's completion function file. */
/** A pattern no line matches (a word starting with `-` is a flag, never a positional word). */
const NEVER = '" -none- "';

export function hostCompletionBash(input: HostCompletionInput): string {
  const fn = `_${input.bin.replace(/[^A-Za-z0-9_]/g, '_')}`;
  // Quoted, a case pattern is literal: the words typed are exactly the command's, so the word
  // being completed is its first argument. (Command ids are words of letters, digits and dashes.)
  const commands = input.hostArgCommands
    .filter((id) => /^[A-Za-z0-9 _-]+$/.test(id))
    .map((id) => `" ${id} "`);
  return `
# ${input.bin}: the hosts of fleet.yaml for --host and a HOST argument (${input.bin} complete-hosts);
# commands and flags as above.
${fn}_host_autocomplete()
{
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" word repo="" want="" i IFS=$' \\t\\n'
  local -a positional=()
  (( COMP_CWORD > 1 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    case "$word" in
      --repo) repo="\${COMP_WORDS[i+1]}"; (( i++ )); continue ;;
      --repo=*) repo="\${word#--repo=}"; continue ;;
      -*=*) continue ;;
      -*)
        case " ${input.valueFlags.join(' ')} " in *" $word "*) (( i++ )) ;; esac
        continue ;;
    esac
    positional+=("$word")
  done
  case " ${input.hostFlags.join(' ')} " in *" $prev "*) [[ -n "$prev" ]] && want=1 ;; esac
  if [[ -z "$want" && "$cur" != -* ]]; then
    case " \${positional[*]} " in
      ${[...commands, NEVER].join('|')}) want=1 ;;
    esac
  fi
  if [[ -n "$want" ]]; then
    local hosts
    hosts="$("\${COMP_WORDS[0]}" complete-hosts \${repo:+--repo "$repo"} 2>/dev/null)"
    COMPREPLY=($(compgen -W "$hosts" -- "$cur"))
    return 0
  fi
  ${fn}_autocomplete
}

complete -F ${fn}_host_autocomplete ${input.bin}
`;
}
