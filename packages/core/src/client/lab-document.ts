/**
 * The lab's document (contract §13): `fleet lab up --json` prints it and `DIR/lab.json` holds it.
 * It stays in core, apart from the lab's supervisor protocol (`@fleet/lab`), because the testkit's
 * acceptance kit reads it and the testkit depends on core and the controller, not on the lab
 * (docs/plugin-authoring.md).
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';

/**
 * `DIR/lab.json`, the document `fleet lab up --json` prints (contract §13). `pid` is the controller's
 * pid when the lab came up; a restart changes it, and `supervisor.json` has the current one.
 */
export const labDocumentSchema = z.lazy(() =>
  z.strictObject({
    repo: z.string(),
    credentials: z.string(),
    hosts: z.array(
      z.strictObject({
        name: z.string(),
        home: z.string(),
        controller: z.string(),
        pid: z.number().int().positive(),
      }),
    ),
  }),
);
export type LabDocument = z.infer<typeof labDocumentSchema>;
