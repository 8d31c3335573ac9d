/**
 * Writing and reading a supervisor definition (unit file, task XML) under the node's home, for the
 * bootstrap adapters' node halves: the `~/` path is validated like every node path, parents are
 * created 0700, and the file is replaced atomically and durably (temp file in the same directory,
 * fsync, rename, directory fsync). UTF-16LE content gets its byte-order mark.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FleetError } from '../errors.js';
import type { SupervisorDefinition } from '../interfaces/bootstrap.js';
import { parseHomePath } from '../paths.js';

/** Absolute path of a `~/` node path under `home`. */
export function homePath(home: string, path: string): string {
  return join(home, ...parseHomePath(path));
}

/** The bytes a definition is written as. */
export function encodeDefinition(definition: SupervisorDefinition): Buffer {
  return definition.encoding === 'utf16le'
    ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(definition.content, 'utf16le')])
    : Buffer.from(definition.content, 'utf8');
}

/** Text of a definition file, by its byte-order mark (UTF-16LE, UTF-8 with or without a BOM). */
export function decodeDefinition(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString('utf16le');
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return bytes.subarray(3).toString('utf8');
  return bytes.toString('utf8');
}

/** Replaces the definition file atomically and durably (mode 0600); returns its absolute path. */
export async function writeDefinitionFile(
  home: string,
  definition: SupervisorDefinition,
): Promise<string> {
  const target = homePath(home, definition.path);
  const dir = dirname(target);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.fleet-tmp-definition-${randomBytes(6).toString('hex')}`);
  try {
    const handle = await open(
      temp,
      constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
      0o600,
    );
    try {
      await handle.writeFile(encodeDefinition(definition));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    if (process.platform !== 'win32') {
      const handle = await open(dir, constants.O_RDONLY);
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new FleetError(
      'ACTION_FAILED',
      `writing ${definition.path}: ${String((error as NodeJS.ErrnoException).code ?? error)}`,
      {
        cause: error,
      },
    );
  }
  return target;
}

/** The text of a definition file, or `null` when there is none. */
export async function readDefinitionFile(home: string, path: string): Promise<string | null> {
  try {
    return decodeDefinition(await readFile(homePath(home, path)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new FleetError(
      'ACTION_FAILED',
      `reading ${path}: ${String((error as NodeJS.ErrnoException).code ?? error)}`,
      {
        cause: error,
      },
    );
  }
}
