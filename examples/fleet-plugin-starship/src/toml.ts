/**
 * The starship domain's own knowledge: its file must be TOML starship can read. The check parses
 * it with `smol-toml`, a library this plugin carries in its packed form (`bundleDependencies`):
 * the node runs the same check with secrets resolved, loading the library from the plugin's own
 * `node_modules` inside the runtime generation (docs/plugin-authoring.md, "Dependencies of a
 * carried plugin").
 *
 * A problem names the line (and column), never the text: once secrets are resolved it may hold
 * one, and smol-toml's own message quotes the line.
 */
import type { Problem } from '@fleet/core/plugin';
import { TomlError, parse } from 'smol-toml';

/** The problems of a starship.toml; `[]` when it parses as TOML. */
export function tomlProblems(content: string, source: string): Problem[] {
  try {
    parse(content);
    return [];
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    return [
      {
        file: source,
        line: error.line,
        message: `not TOML starship can read (column ${error.column})`,
      },
    ];
  }
}
