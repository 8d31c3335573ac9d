/**
 * A tool `fleet version` may run (contract §5.1, docs/version.md): the wire's versions request
 * names it and the node policy's `versions.tools` lists it, so it sits at the bottom of core's
 * folders (docs/architecture.md, "Core's folders").
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/** A bare command name (no path, no shell syntax): what is looked up along PATH. */
export const toolNameSchema = z.lazy(() =>
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/, 'must be a bare command name'),
);
