/**
 * Which supervisor runs this node's controller, as the node itself recorded it (contract §10.2,
 * §12): `~/.local/state/fleet/supervisor.json`, written by the bootstrap adapter that installed
 * the controller's definition (and by `fleet lab up` for its own supervisor) — never taken from a
 * request. The controller reads it to drive its own coupled restarts (transport-identity's
 * `--node-id` switch), the runner to keep the same unit or task across generations, `lab down` to
 * remove what it installed.
 *
 *   { "version": 1, "supervisor": "systemd-user", "name": "fleet-controller.service",
 *     "definition": "~/.config/systemd/user/fleet-controller.service", "recordedAt": "…" }
 *
 * fleet's own state: never a domain's path (contract §5.1).
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { FleetError } from '../errors.js';
import { parseStrictJson } from '../json.js';
import { readDefinitionFile, writeDefinitionFile } from './definition-file.js';

/** `~/`-relative location of the record. */
export const SUPERVISOR_RECORD_PATH = '~/.local/state/fleet/supervisor.json';

/** The supervisors a node can record: those fleet drives (`none` is never recorded). */
export const RECORDED_SUPERVISORS = ['systemd-user', 'windows-task', 'launchd', 'lab'] as const;

export const supervisorRecordSchema = z.lazy(() =>
  z.strictObject({
    version: z.literal(1),
    supervisor: z.enum(RECORDED_SUPERVISORS),
    /** The supervisor's own name for the controller: the unit, the task, the label, the lab host. */
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9@._:-]{0,199}$/, 'must be a unit, task, label or host name'),
    /** `~/`-relative path of the definition the adapter installed. */
    definition: z.string().startsWith('~/').max(1000),
    recordedAt: z.iso.datetime(),
  }),
);
export type SupervisorRecord = z.infer<typeof supervisorRecordSchema>;

/**
 * The node's record, or `null` when there is none (a node no adapter installed). An unreadable or
 * invalid record is `RECOVERY_REQUIRED`: guessing another supervisor could restart the wrong
 * process.
 */
export async function readSupervisorRecord(home: string): Promise<SupervisorRecord | null> {
  let text: string | null;
  try {
    text = await readDefinitionFile(home, SUPERVISOR_RECORD_PATH);
  } catch (error) {
    throw new FleetError(
      'RECOVERY_REQUIRED',
      `${SUPERVISOR_RECORD_PATH} is unreadable: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (text === null) return null;
  const parsed = supervisorRecordSchema.safeParse(
    parseStrictJson(text, SUPERVISOR_RECORD_PATH, 'RECOVERY_REQUIRED'),
  );
  if (!parsed.success) {
    throw new FleetError(
      'RECOVERY_REQUIRED',
      `${SUPERVISOR_RECORD_PATH} is not a supervisor record (${parsed.error.issues[0]?.message ?? 'invalid'}): fix or remove it on the node`,
    );
  }
  return parsed.data;
}

/** Replaces the record atomically and durably (0600, in the 0700 state directory). */
export async function writeSupervisorRecord(
  home: string,
  record: Omit<SupervisorRecord, 'version' | 'recordedAt'> & { readonly recordedAt?: string },
): Promise<SupervisorRecord> {
  const full = supervisorRecordSchema.parse({
    version: 1,
    ...record,
    recordedAt: record.recordedAt ?? new Date().toISOString(),
  });
  await writeDefinitionFile(home, {
    path: SUPERVISOR_RECORD_PATH,
    content: `${JSON.stringify(full, null, 2)}\n`,
    encoding: 'utf8',
  });
  return full;
}
