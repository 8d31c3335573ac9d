/**
 * The node's env-file chain (contract §4): `~/.config/fleet/env`, then `~/.config/fleet/env.d/*.env`
 * in name order, a later file overriding an earlier one; `KEY=VALUE` lines and `#` comments.
 * Values never leave the node: errors name files, lines and keys, never values.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FleetError } from '../errors.js';
import { fileStamp } from '../file-stamp.js';
import type { SecretValues } from '../interfaces/node-context.js';
import { scanPlaceholders } from '../render/template.js';
import { createRedactor, SECRET_MIN_LENGTH } from './redact.js';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `~`-relative locations of the chain, in the order they are read. */
export const ENV_FILE = '.config/fleet/env';
export const ENV_DIR = '.config/fleet/env.d';

/**
 * Parses one env file. A value may be wrapped in matching single or double quotes (removed, no
 * escapes interpreted); an optional `export ` prefix is accepted, as shells write it.
 */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const values = new Map<string, string>();
  const lines = text.replace(/^\ufeff/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const body = line.startsWith('export ') ? line.slice('export '.length).trimStart() : line;
    const eq = body.indexOf('=');
    const key = eq > 0 ? body.slice(0, eq).trim() : '';
    if (!KEY.test(key)) {
      throw new FleetError(
        'ENV_FILE_INVALID',
        `${file}:${index + 1}: expected KEY=VALUE (the line is not shown: it may hold a secret)`,
      );
    }
    let value = body.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      value = value.slice(1, -1);
    }
    values.set(key, value);
  });
  return values;
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The chain's files under `home`, in the order they are read (`~`-relative). */
async function chainFiles(home: string): Promise<string[]> {
  const files = [ENV_FILE];
  try {
    const entries = await readdir(join(home, ENV_DIR));
    files.push(
      ...entries
        .filter((name) => name.endsWith('.env') && !name.startsWith('.'))
        .sort()
        .map((name) => `${ENV_DIR}/${name}`),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return files;
}

/** Loads the whole chain under `home`. Missing files are an empty chain, not an error. */
export async function loadEnvChain(home: string): Promise<SecretValues> {
  return readChain(home, await chainFiles(home));
}

async function readChain(home: string, files: readonly string[]): Promise<SecretValues> {
  const values = new Map<string, string>();
  for (const file of files) {
    const text = await readIfPresent(join(home, file));
    if (text === undefined) continue;
    for (const [key, value] of parseEnvFile(text, `~/${file}`)) values.set(key, value);
  }
  return values;
}

/** A {@link fileStamp}, `null` when absent (most of a chain's files usually are). */
type Stamp = string | null;

function stampOf(path: string): Stamp {
  try {
    return fileStamp(path, { follow: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * {@link loadEnvChain} for a long-lived process (the controller asks for the chain on every
 * request, contract §14 "means"): the chain is read and parsed again only when a file of it, or
 * the env.d directory (a file added, removed or renamed), has a new stamp — a stat per file per
 * call instead of a read and a parse. Every file is stamped before it is read, so a file changed
 * during a read is read again next time; a chain that does not parse is never kept (each call
 * throws again until it is fixed).
 */
export function createEnvChainLoader(home: string): () => Promise<SecretValues> {
  let kept:
    { dir: Stamp; files: readonly string[]; stamps: Stamp[]; values: SecretValues } | undefined;
  return async () => {
    const dir = stampOf(join(home, ENV_DIR));
    const files = kept !== undefined && kept.dir === dir ? kept.files : await chainFiles(home);
    const stamps = files.map((file) => stampOf(join(home, file)));
    if (
      kept !== undefined &&
      kept.dir === dir &&
      kept.files === files &&
      stamps.every((stamp, i) => stamp === kept?.stamps[i])
    ) {
      return kept.values;
    }
    const values = await readChain(home, files);
    kept = { dir, files, stamps, values };
    return values;
  };
}

/**
 * Node-side resolution at install: every `{{ secret.NAME }}` replaced by its value. A name the
 * chain does not hold fails the install with `SECRET_MISSING`, a value shorter than
 * {@link SECRET_MIN_LENGTH} with `SECRET_TOO_SHORT` (names only, never values or lengths): such a
 * value could not be redacted back (docs/secrets.md), so fleet never writes one. Nothing is written.
 */
export function resolveSecrets(text: string, secrets: SecretValues, file: string): string {
  const { placeholders } = scanPlaceholders(text);
  const missing = [
    ...new Set(
      placeholders
        .filter((ph) => ph.namespace === 'secret' && !secrets.has(ph.name))
        .map((ph) => ph.name),
    ),
  ];
  if (missing.length > 0) {
    throw new FleetError(
      'SECRET_MISSING',
      `${file} needs secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, not in the node's env-file chain`,
    );
  }
  const short = [
    ...new Set(
      placeholders
        .filter((ph) => ph.namespace === 'secret')
        .map((ph) => ph.name)
        .filter((name) => (secrets.get(name) as string).length < SECRET_MIN_LENGTH),
    ),
  ];
  if (short.length > 0) {
    throw new FleetError(
      'SECRET_TOO_SHORT',
      `${file} uses secret${short.length > 1 ? 's' : ''} ${short.join(', ')}, shorter than ${SECRET_MIN_LENGTH} characters in the node's env-file chain (a value that short cannot be redacted back); lengthen ${short.length > 1 ? 'them' : 'it'}; nothing written`,
    );
  }
  let out = '';
  let last = 0;
  for (const ph of placeholders) {
    if (ph.namespace !== 'secret') continue;
    out += text.slice(last, ph.start) + (secrets.get(ph.name) as string);
    last = ph.end;
  }
  return out + text.slice(last);
}

/**
 * Redaction of content by the current chain alone: every secret value replaced by its
 * `{{ secret.NAME }}` placeholder, longest value first so a secret containing another is redacted
 * whole. Values shorter than {@link SECRET_MIN_LENGTH} (and empty ones) are never replaced. The
 * controller redacts with {@link createRedactor}, which also knows the values it resolved earlier.
 */
export function redactSecrets(text: string, secrets: SecretValues): string {
  return createRedactor(secrets).content(text);
}

/** The names in the chain whose value is shorter than {@link SECRET_MIN_LENGTH} (sorted). */
export function shortSecretNames(secrets: SecretValues): string[] {
  return [...secrets]
    .filter(([, value]) => value.length < SECRET_MIN_LENGTH)
    .map(([name]) => name)
    .sort();
}
