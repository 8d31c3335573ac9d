import type * as z from 'zod';
import type { Problem } from './errors.js';

/** Dotted field path (`hosts.alpha.platform`, `artifacts[0].sha256`). */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** One problem per zod issue, each naming the file and field path; `lineOf` adds the line. */
export function zodProblems(
  error: z.ZodError,
  file: string | undefined,
  lineOf?: (path: readonly PropertyKey[]) => number | undefined,
): Problem[] {
  return error.issues.map((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const path = keys.length === 1 ? [...issue.path, keys[0] as string] : issue.path;
    const line = lineOf?.(path);
    // A bad record key's own message ("must be a host name") is nested; zod's is "Invalid key".
    const keyMessage = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown field${keys.length > 1 ? `s ${keys.join(', ')}` : ''}`
        : keyMessage !== undefined
          ? `invalid key: ${keyMessage}`
          : issue.message;
    return {
      ...(file === undefined ? {} : { file }),
      ...(line === undefined ? {} : { line }),
      ...(path.length > 0 ? { path: fieldPath(path) } : {}),
      message,
    };
  });
}
