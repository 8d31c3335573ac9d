import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { newId, type Answer, type TestNode } from './node.js';

export const sha256 = (bytes: string | Buffer | Uint8Array) =>
  createHash('sha256').update(bytes).digest('hex');

export interface FileSpec {
  readonly path: string;
  readonly fileId: string;
  readonly content: string;
  /** Default: the live file's sha256 (or null when absent). */
  readonly expectedSha256?: string | null;
}

/** The body of an install request, expected shas taken from disk unless given. */
export interface InstallOptions {
  readonly operationId?: string;
  readonly parameters?: Record<string, string>;
  /** Node policy action ids by role (`{ reload: 'router-reload' }`). */
  readonly actions?: Record<string, string>;
  readonly unattended?: boolean;
  /** The fleet repository commit the request names (`null` included); absent: not sent. */
  readonly repoCommit?: string | null;
  /** Asks for a refused action's output tail in the answer (`toolOutput: true`); absent: not sent. */
  readonly toolOutput?: true;
}

export async function installBody(
  node: TestNode,
  domain: string,
  files: readonly FileSpec[],
  options: InstallOptions = {},
) {
  const out = [];
  for (const file of files) {
    const live = await node.read(file.path);
    out.push({
      fileId: file.fileId,
      path: file.path,
      expectedSha256:
        file.expectedSha256 !== undefined ? file.expectedSha256 : live ? sha256(live) : null,
      content: file.content,
    });
  }
  return {
    operationId: options.operationId ?? newId(),
    domain,
    files: out,
    parameters: options.parameters ?? {},
    ...(options.actions ? { actions: options.actions } : {}),
    ...(options.unattended === undefined ? {} : { unattended: options.unattended }),
    ...(options.repoCommit === undefined ? {} : { repoCommit: options.repoCommit }),
    ...(options.toolOutput === undefined ? {} : { toolOutput: options.toolOutput }),
  };
}

export async function install(
  node: TestNode,
  token: string,
  domain: string,
  files: readonly FileSpec[],
  options: InstallOptions = {},
): Promise<Answer> {
  return node.call('/v1/install', { token, body: await installBody(node, domain, files, options) });
}

/** Waits (bounded) until a file whose name starts with `prefix` exists in `dir`. */
export async function waitForFile(dir: string, prefix: string): Promise<string> {
  for (let i = 0; i < 2000; i += 1) {
    const names = await readdir(dir).catch(() => [] as string[]);
    const found = names.find((name) => name.startsWith(prefix));
    if (found) return found;
    await sleep(5);
  }
  throw new Error(`no ${prefix}* appeared in ${dir}`);
}

/** Runs `fn` with FLEET_FAILPOINT set (in this process: an in-process controller sees it). */
export async function withFailpoint<T>(spec: string, fn: () => Promise<T>): Promise<T> {
  process.env['FLEET_FAILPOINT'] = spec;
  try {
    return await fn();
  } finally {
    delete process.env['FLEET_FAILPOINT'];
  }
}
