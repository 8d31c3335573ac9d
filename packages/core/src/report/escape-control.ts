/**
 * Escaping control characters in text shown to a person: a module of its own, so the node's
 * policy actions (which escape an action's output) do not load the operator's report renderers.
 */

/** Control characters shown escaped, so a hostile path cannot drive a terminal or forge lines. */
export function escapeControl(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}
