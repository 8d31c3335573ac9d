/** zod schemas of the fleet repository's files (contract §3). Unknown fields are errors. */
import { isAbsolute } from 'node:path';
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { commitLabelSchema } from '../schemas/commit-label.js';
import { pinnedPluginsSchema } from '../schemas/runtime-plugins.js';
import { SUPERVISORS } from '../schemas/supervisors.js';

export const PLATFORMS = ['linux', 'darwin', 'win32'] as const;

// Keys that would reach an object's prototype machinery if they ever got past the schema.
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const hostName = z.lazy(() =>
  z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be a host name (lower-case letters, digits, -)'),
);
const sha256Hex = z.lazy(() =>
  z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
);
/** An npm `dist.integrity` of sha512 (Subresource Integrity form: `sha512-` and 88 base64). */
export const npmIntegritySchema = z.lazy(() =>
  z
    .string()
    .regex(
      /^sha512-[A-Za-z0-9+/]{86}==$/,
      'must be an npm integrity: sha512- and 88 base64 characters',
    ),
);
const semver = z.lazy(() =>
  z
    .string()
    .regex(
      /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/,
      'must be a semantic version',
    ),
);

const controllerUrl = z.lazy(() =>
  z.string().refine((value) => {
    try {
      const url = new URL(value);
      return (
        (url.protocol === 'http:' || url.protocol === 'https:') &&
        url.username === '' &&
        url.password === '' &&
        (url.pathname === '/' || url.pathname === '') &&
        url.search === '' &&
        url.hash === ''
      );
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// origin without credentials or path'),
);

const tlsFingerprint = z.lazy(() =>
  z
    .string()
    .regex(
      /^sha256:([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$/,
      'must be sha256: followed by 32 colon-separated hex bytes',
    ),
);

const sshKey = z.lazy(() =>
  z
    .string()
    .regex(
      /^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+={0,3}$/,
      'must be an OpenSSH public key (type and base64, no comment)',
    ),
);

export const hostEntrySchema = z.lazy(() =>
  z
    .strictObject({
      controller: controllerUrl,
      tls: z.strictObject({ fingerprint: tlsFingerprint }).optional(),
      platform: z.enum(PLATFORMS),
      supervisor: z.enum(SUPERVISORS),
      upgrade: z.strictObject({ strategy: z.enum(['tarball']) }).optional(),
      domains: z.array(z.string().min(1)).default([]),
      ssh: z
        .strictObject({
          host: z
            .string()
            .min(1)
            .regex(/^[A-Za-z0-9.:[\]-]+$/, 'must be a host name or address'),
          port: z.number().int().min(1).max(65535).default(22),
          user: z.string().regex(/^[a-z_][a-z0-9_-]*$/, 'must be a user name'),
          hostKey: sshKey,
        })
        .optional(),
      probes: z.strictObject({ tools: z.array(z.string().min(1)).default([]) }).optional(),
    })
    .refine((host) => !host.controller.startsWith('http:') || isLoopbackUrl(host.controller), {
      message: 'a non-loopback controller must use https:// with tls.fingerprint',
      path: ['controller'],
    })
    .refine((host) => !host.controller.startsWith('https:') || host.tls !== undefined, {
      message: 'an https:// controller needs tls.fingerprint (the pinned certificate)',
      path: ['tls'],
    })
    .refine((host) => new Set(host.domains).size === host.domains.length, {
      message: 'a domain is listed twice',
      path: ['domains'],
    }),
);

function isLoopbackUrl(value: string): boolean {
  const host = new URL(value).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** True when `text` holds a C0 control character or DEL. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * The reload of a domain: the id of an action each node's own policy defines (contract §5.1). An
 * argv never goes in the repo or on the wire: a write credential is never a shell.
 */
const ARGV_MOVED =
  'an argv no longer goes in fleet.yaml: a node runs only the actions its own policy defines (~/.config/fleet/node-policy.yaml on the node: domains.<domain>.actions.<id>.argv, see docs/node-policy.md); name the action id here, e.g. reload: router-reload';
const reloadActionId = z.lazy(() =>
  z
    .string({
      error: (issue) =>
        Array.isArray(issue.input) ? ARGV_MOVED : 'must be an action id of the node policy',
    })
    .regex(/^[a-z][a-z0-9._-]{0,63}$/, {
      error: (issue) =>
        /\s/.test(String(issue.input))
          ? ARGV_MOVED
          : 'must be an action id (lower-case letters, digits, ., _, -; at most 64)',
    }),
);

/** The platforms the npm registry ships Node.js for as `node-<platform>` packages. */
export const NODE_PLATFORMS = [
  'linux-x64',
  'linux-arm64',
  'darwin-x64',
  'darwin-arm64',
  'win-x64',
] as const;
export type NodePlatform = (typeof NODE_PLATFORMS)[number];

// Long because fleet.yaml is: one zod object, its fields a table read top to bottom.
export const fleetManifestSchema = z.lazy(() =>
  z.strictObject({
    apiVersion: z.literal('fleet/v1', { message: 'must be fleet/v1' }),
    canonicalVersion: semver,
    artifacts: z
      .array(
        z.strictObject({
          version: semver,
          file: z.string().min(1),
          sha256: sha256Hex,
          /** The artifact's own commit label (its build record, contract §1.8): checked, not trusted. */
          commit: commitLabelSchema,
          /**
           * Its release signature (docs/releases.md, ADR 0019): the base64 body of an SSH
           * signature (`ssh-keygen -Y sign -n fleet-release`) over the tarball's bytes. A node
           * stages only what one of its policy's trusted keys signed.
           */
          signature: z
            .string()
            .regex(/^[A-Za-z0-9+/]{40,4000}={0,2}$/, 'must be the base64 body of an SSH signature')
            .optional(),
          /**
           * The Node.js the release ships for hosts without one (docs/releases.md): the npm
           * registry's `node-<platform>` package, one per platform, kept in the artifact store
           * beside the runtime and pinned by sha256. `fleet host add` installs it on a host whose
           * own Node.js is missing or older than the floor.
           */
          node: z
            .array(
              z.strictObject({
                platform: z.enum(NODE_PLATFORMS),
                version: semver,
                file: z.string().min(1),
                sha256: sha256Hex,
                /**
                 * The npm registry's integrity of that tarball (`dist.integrity`, SRI sha512), so
                 * the pin can be checked against the registry (`npm view node-<platform>@<version>
                 * dist.integrity`) as well as the store. Absent in pins made before it was kept.
                 */
                integrity: npmIntegritySchema.optional(),
              }),
            )
            .optional(),
        }),
      )
      .default([]),
    /**
     * The operator's release signing keys (docs/releases.md): `fleet host add` writes them into a
     * new node's policy as its trusted keys; `fleet release` adds the key it signs with.
     */
    signing: z
      .strictObject({
        keys: z
          .array(
            z
              .string()
              .regex(
                /^ssh-ed25519 [A-Za-z0-9+/]+={0,3}$/,
                'must be an Ed25519 OpenSSH public key (ssh-ed25519 and base64, no comment)',
              ),
          )
          .min(1),
      })
      .optional(),
    /**
     * The third-party plugins every node runs (contract §10.5), each pinned by its packed tarball's
     * sha256: the runtime artifact carries them, `fleet version` reports a node lacking one.
     */
    plugins: pinnedPluginsSchema.default([]),
    hosts: z.record(hostName, hostEntrySchema),
    domains: z
      .record(
        z.string().regex(/^[a-z][a-z0-9-]*$/, 'must be a domain name'),
        z.strictObject({
          unattended: z.enum(['allow', 'deny']).default('deny'),
          backups: z.number().int().min(1).max(1000).optional(),
          /**
           * The node policy action the domain's installer runs after writing (the router's reload):
           * an id; the argv, its timeout and environment are each node's own (contract §5.1).
           */
          reload: reloadActionId.optional(),
          /** The action run on each changed file's staged new content before it replaces the old. */
          validate: reloadActionId.optional(),
          /** The action run after the reload (a process that reads its configuration at start). */
          restart: reloadActionId.optional(),
        }),
      )
      .default({}),
  }),
);

export type FleetManifest = z.infer<typeof fleetManifestSchema>;
export type HostEntry = z.infer<typeof hostEntrySchema>;

/** `hosts/<host>.yaml`: a flat map NAME: string. No secrets here, ever. */
export const hostVariablesSchema = z.lazy(() =>
  z.record(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name (letters, digits, _)')
      .refine((name) => !RESERVED_KEYS.has(name), 'is a reserved name'),
    z
      .string({ message: 'must be a string (quote numbers and booleans)' })
      // One line: a rendered placeholder stays on its line, which keeps rendering reversible and
      // lets history be compared line by line.
      .refine((value) => !/[\r\n]/.test(value), 'must be a single line'),
  ),
);
export type HostVariables = z.infer<typeof hostVariablesSchema>;

/**
 * The operator's private key for a host's SSH recovery path (contract §12, `bootstrap apply
 * --recover`): referenced by absolute path, never stored in the repo or in this file.
 */
const identityFile = z.lazy(() =>
  z
    .string()
    .min(1)
    .max(4096)
    .refine((path) => !hasControl(path), 'must not contain control characters')
    .refine((path) => isAbsolute(path), 'must be an absolute path'),
);

/** The operator's credentials file (contract §3), outside the repo. */
export const credentialsSchema = z.lazy(() =>
  z.strictObject({
    version: z.literal(1),
    hosts: z.record(
      hostName,
      z.strictObject({
        token: z.string().min(16),
        ssh: z.strictObject({ identityFile }).optional(),
      }),
    ),
  }),
);
export type Credentials = z.infer<typeof credentialsSchema>;
