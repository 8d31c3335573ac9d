/**
 * zod schemas for what crosses the plugin boundary: a hook's return value is untrusted data from
 * another package (possibly built against another copy of this module), so it is validated here
 * before anything uses it.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { isHomePath } from '../paths.js';
import { fleetOwnReason, isFleetOwnPath } from '../policy/fleet-paths.js';
import { actionIdSchema } from '../schemas/node-policy.js';
import { fileModeSchema } from '../wire/protocol.js';

const identifier = z.lazy(() =>
  z.string().regex(/^[a-z][a-z0-9-]*$/, 'must be lower-case letters, digits and dashes'),
);
const dottedIdentifier = z.lazy(() =>
  z.string().regex(/^[a-z][a-z0-9-]*(\.[a-z0-9-]+)*$/, 'must be lower-case dotted words'),
);
const hostVariableName = z.lazy(() =>
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name (letters, digits, _)'),
);
// fleet's own state can never be a domain's path (contract §5.1): refused at registration.
const homePath = z.lazy(() =>
  z
    .string()
    .refine(isHomePath, 'must be a ~/-relative path inside the node home')
    .refine((path) => !isHomePath(path) || !isFleetOwnPath(path), {
      error: (issue) => fleetOwnReason(String(issue.input)),
    }),
);
const relativePath = z.lazy(() =>
  z
    .string()
    .refine((p) => isHomePath(`~/${p}`), 'must be a plain relative path (no .., no leading /)'),
);
const loader = z.lazy(() =>
  z
    .custom<() => Promise<unknown>>((value) => typeof value === 'function', 'must be a function')
    .optional(),
);
const format = z.lazy(() => z.enum(['yaml', 'json', 'markdown', 'text']));

/**
 * A file a domain's repository manifest declares (contract §10.4): its id is its node path, so a
 * node names it without reading the repository.
 */
export const repoManagedFileSchema = z.lazy(() =>
  z
    .strictObject({
      id: homePath,
      path: homePath,
      canonical: relativePath,
      kind: z.enum(['whole', 'block']),
      format,
      markers: z.strictObject({ begin: z.string().min(1), end: z.string().min(1) }).optional(),
      mode: fileModeSchema.optional(),
      action: actionIdSchema.optional(),
      template: z.literal(false).optional(),
    })
    .refine((file) => file.id === file.path, { message: 'must be its path', path: ['id'] })
    .refine((file) => file.kind !== 'block' || file.markers !== undefined, {
      message: 'a block file needs markers',
      path: ['markers'],
    }),
);

const managedFile = z.lazy(() =>
  z
    .strictObject({
      id: dottedIdentifier.or(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)),
      path: homePath,
      pathVariable: hostVariableName.optional(),
      canonical: relativePath,
      kind: z.enum(['whole', 'block']),
      format,
      markers: z.strictObject({ begin: z.string().min(1), end: z.string().min(1) }).optional(),
    })
    .refine((file) => file.kind !== 'block' || file.markers !== undefined, {
      message: 'a block file needs markers',
      path: ['markers'],
    }),
);

const derivedPath = z.lazy(() =>
  z.strictObject({
    id: z.string().min(1),
    path: homePath,
    pathVariable: hostVariableName.optional(),
    format,
    derivedFrom: z.string().min(1),
    description: z.string(),
  }),
);

const coupling = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('none') }),
    z.strictObject({
      kind: z.literal('process'),
      actions: z
        .array(z.strictObject({ kind: identifier, description: z.string() }))
        .min(1, 'a process coupling names at least one action'),
    }),
  ]),
);

export const installerDescriptorSchema = z.lazy(() =>
  z
    .strictObject({
      kind: z.literal('fleet.installer'),
      domain: identifier,
      description: z.string(),
      files: z.array(managedFile),
      repoManifest: relativePath.optional(),
      derivedPaths: z.array(derivedPath).optional(),
      hostVariables: z.array(hostVariableName),
      coupling,
      backups: z.number().int().min(1).max(1000).optional(),
      examples: z.array(z.strictObject({ path: relativePath, content: z.string() })).optional(),
      load: loader,
    })
    .refine((d) => d.files.length > 0 || d.repoManifest !== undefined, {
      message: 'a domain owns at least one file (or declares its files in a repoManifest)',
      path: ['files'],
    }),
);

export const adopterDescriptorSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal('fleet.adopter'),
    domain: identifier,
    load: loader,
  }),
);

export const proberDescriptorSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal('fleet.prober'),
    id: dottedIdentifier,
    layer: z.enum(['file', 'derived', 'runtime', 'version']),
    domain: identifier.optional(),
    description: z.string(),
    load: loader,
  }),
);

export const bootstrapAdapterDescriptorSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal('fleet.bootstrap-adapter'),
    supervisor: z.enum(['systemd-user', 'windows-task', 'launchd', 'lab', 'none']),
    platforms: z.array(z.enum(['linux', 'darwin', 'win32'])).min(1),
    description: z.string(),
    load: loader,
  }),
);

/** The envelope only: checked first so a foreign API version is named before its shape. */
export const registrationEnvelopeSchema = z.lazy(() =>
  z.object({
    kind: z.literal('fleet.registration'),
    apiVersion: z.number().int(),
  }),
);

export const registrationSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal('fleet.registration'),
    apiVersion: z.number().int(),
    installers: z.array(installerDescriptorSchema),
    adopters: z.array(adopterDescriptorSchema),
    probers: z.array(proberDescriptorSchema),
    bootstrapAdapters: z.array(bootstrapAdapterDescriptorSchema),
  }),
);
