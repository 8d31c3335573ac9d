/**
 * The plugin API version this copy of `@fleet/core` implements. A plugin's registration names the
 * version it was built against; the registry refuses any other, naming both (a breaking change to
 * anything in `interfaces/` raises this number — see docs/architecture.md).
 */
export const FLEET_PLUGIN_API_VERSION = 1;

/** The oclif hook every fleet plugin implements. */
export const REGISTER_HOOK = 'fleet:register';
