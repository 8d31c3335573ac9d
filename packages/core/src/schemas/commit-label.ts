/**
 * A runtime artifact's commit label (fleet.yaml's `artifacts[].commit`, the build record's): the
 * full commit hash, `-dirty` for a build from a tree with uncommitted changes. fleet.yaml's schema
 * and the build record (`runtime/build-record.ts`, which says why the label is what travels) both
 * read it, so it sits at the bottom of core's folders (docs/architecture.md, "Core's folders").
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/** fleet.yaml's `artifacts[].commit`: a full commit hash, `-dirty` for a build from a dirty tree. */
export const commitLabelSchema = z.lazy(() =>
  z
    .string()
    .regex(
      /^(?:[0-9a-f]{40}|[0-9a-f]{64})(?:-dirty)?$/,
      'must be the full commit hash the artifact was built from (40 or 64 hex digits, -dirty for a build from a tree with uncommitted changes)',
    ),
);
