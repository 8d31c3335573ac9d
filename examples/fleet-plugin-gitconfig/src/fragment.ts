/**
 * Fail-closed checks of the block's body as git-config syntax (git-config(1), "CONFIGURATION
 * FILE"). The block is spliced into a file fleet does not own, so a body that git could not parse,
 * or one that would change the meaning of the user's lines, is refused before anything is written:
 *
 * - the first setting must follow a `[section]` header: a bare `key = value` at the top of the
 *   block would silently join whatever section the user's text above the block ended with;
 * - every other line is blank, a `#`/`;` comment, a `[section]` or `[section "subsection"]`
 *   header, a `name = value` (or bare boolean `name`) line, or the continuation of a value whose
 *   previous line ended with a backslash.
 *
 * Problems name line numbers, never the text: once secrets are resolved it may hold one.
 */
import type { Problem } from '@fleet/core/plugin';

const SECTION = /^\s*\[\s*[A-Za-z0-9.-]+(\s+"(?:[^"\\\n]|\\.)*")?\s*\]\s*(?:[#;].*)?$/;
const SETTING = /^\s*[A-Za-z][A-Za-z0-9-]*\s*(?:=.*)?$/;
const COMMENT = /^\s*(?:[#;].*)?$/;

/** The problems of a git-config fragment; `[]` when git can read it as it is meant. */
export function fragmentProblems(body: string, source: string): Problem[] {
  const problems: Problem[] = [];
  let inSection = false;
  let continued = false;
  const lines = body.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((text, index) => {
    const line = index + 1;
    if (continued) {
      continued = text.endsWith('\\');
      return;
    }
    if (COMMENT.test(text)) return;
    if (SECTION.test(text)) {
      inSection = true;
      return;
    }
    if (SETTING.test(text)) {
      if (!inSection) {
        problems.push({
          file: source,
          line,
          message:
            'a setting before any [section] header would join the section above the fleet block',
        });
      }
      continued = text.endsWith('\\');
      return;
    }
    problems.push({
      file: source,
      line,
      message: 'not git-config syntax (a [section], name = value, or comment)',
    });
  });
  if (continued) {
    problems.push({
      file: source,
      line: lines.length,
      message: 'the last value continues past the end of the block',
    });
  }
  return problems;
}
