/**
 * The pin of a plugin that travels to the nodes (contract §10.5): fleet.yaml's `plugins:` entry,
 * the build record's, the catalog's identity. Here, at the bottom of core's folders, because the
 * repository model, the wire and the runtime all read it (docs/architecture.md, "Core's folders");
 * what the runtime does with a pin stays in `runtime/plugins.ts`.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/** An npm package name (scoped or not), as npm accepts it for a new package. */
export const pluginNameSchema = z.lazy(() =>
  z
    .string()
    .max(214)
    .regex(
      /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/,
      'must be an npm package name (lower-case, optionally @scope/)',
    ),
);

const pluginVersionSchema = z.lazy(() =>
  z
    .string()
    .regex(
      /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/,
      'must be a semantic version (the plugin package.json version)',
    ),
);

/** One pinned plugin: fleet.yaml's entry, the build record's entry, the catalog's identity. */
export const pinnedPluginSchema = z.strictObject({
  name: pluginNameSchema,
  version: pluginVersionSchema,
  /** The sha256 of the plugin's packed tarball (`npm pack` of the plugin). */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
});
export type PinnedPlugin = z.infer<typeof pinnedPluginSchema>;

/** A list of pins, each name once. */
export const pinnedPluginsSchema = z.lazy(() =>
  z
    .array(pinnedPluginSchema)
    .refine((list) => new Set(list.map((p) => p.name)).size === list.length, {
      message: 'a plugin is named twice',
    }),
);
