/**
 * The node's secret memory (contract §4, §15; docs/secrets.md): every secret value the controller
 * resolved into a file, kept while a file that may hold it — a live managed file or a backup —
 * still does, so redaction covers a value after it was rotated or removed from the env-file chain.
 *
 * `~/.local/state/fleet/secret-memory.json` (0600, in the 0700 state directory, replaced
 * atomically): per value, the name it last had and its *holders* (`~/` paths of the files that
 * held it when last looked at). It holds values in clear, as the backups beside it do: they are
 * the same secrets, behind the same permission, and an encrypted copy would need a key kept right
 * next to it. It is sent nowhere and never audited.
 *
 * Bookkeeping, exact and crash-safe:
 * - **retain**, before the new content or a backup can be on disk (the writer's `retain` hook, after
 *   the backup, before the temp file): every known value (the chain's and the remembered ones) found
 *   in those bytes gets that holder, durably. A crash after that over-remembers; never the reverse.
 * - **reconcile(paths)**, after an operation (the files it wrote or restored, the backups it wrote
 *   or pruned) and at start (every managed file, every backup, every recorded holder): each path is
 *   read and the holder kept exactly where the value still occurs. A value with no holder left is
 *   forgotten. Per-path locks keep two operations from reconciling the same file at once.
 * A path that cannot be read keeps its holders (the safe side).
 */
import {
  FleetError,
  SECRET_MIN_LENGTH,
  type RememberedSecret,
  type SecretValues,
  compareCodeUnits,
} from '@fleet/core/node';
import * as z from '@fleet/core/zod';
import { writeFileAtomic } from './fs/durable.js';
import { readLive, targetOf } from './fs/safe-path.js';
import { homeRelative, type StatePaths } from './state-paths.js';

export const SECRET_MEMORY_SCHEMA = 'fleet.secret-memory/v1';

const memorySchema = z.strictObject({
  schema: z.literal(SECRET_MEMORY_SCHEMA),
  values: z.array(
    z.strictObject({
      name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
      value: z.string().min(SECRET_MIN_LENGTH),
      holders: z.array(z.string().startsWith('~/')),
    }),
  ),
});

/** A file's bytes, for holder checks: `null` when it does not exist, `undefined` when unreadable. */
export type HolderReader = (path: string) => Promise<Uint8Array | null | undefined>;

interface Entry {
  name: string;
  readonly needle: Buffer;
  readonly holders: Set<string>;
}

export class SecretMemory {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly read: HolderReader,
    private readonly entries: Map<string, Entry>,
  ) {}

  /**
   * Loads the memory of `home`. The file is read like any state file (no symbolic link anywhere);
   * one that does not parse is `RECOVERY_REQUIRED`: starting without it could leak a rotated value.
   */
  static async open(state: StatePaths, maxFileBytes: number): Promise<SecretMemory> {
    const read: HolderReader = async (path) => {
      try {
        return (
          (await readLive(state.home, targetOf(state.home, path), maxFileBytes))?.bytes ?? null
        );
      } catch {
        return undefined;
      }
    };
    const entries = new Map<string, Entry>();
    const live = await readLive(
      state.home,
      targetOf(state.home, homeRelative(state.home, state.secretMemory)),
      16 * maxFileBytes,
    );
    if (live !== null) {
      let parsed;
      try {
        parsed = memorySchema.safeParse(JSON.parse(live.bytes.toString('utf8')));
      } catch {
        parsed = undefined;
      }
      if (!parsed?.success) {
        throw new FleetError(
          'RECOVERY_REQUIRED',
          `${homeRelative(state.home, state.secretMemory)} is unreadable; the controller will not start without it (values it remembers could leak); restore it from a backup of the node, or move it aside knowing that secrets rotated since their files were written are then no longer redacted`,
        );
      }
      for (const { name, value, holders } of parsed.data.values) {
        entries.set(value, { name, needle: Buffer.from(value, 'utf8'), holders: new Set(holders) });
      }
    }
    return new SecretMemory(state.secretMemory, read, entries);
  }

  /** The values remembered now, with their last names (for the redactor). */
  remembered(): RememberedSecret[] {
    return [...this.entries].map(([value, entry]) => ({ name: entry.name, value }));
  }

  /** Every path recorded as holding a value. */
  holders(): string[] {
    return [...new Set([...this.entries.values()].flatMap((entry) => [...entry.holders]))].sort();
  }

  /** Records, durably, which known values each holder's bytes contain. */
  retain(
    holders: readonly { path: string; bytes: Uint8Array }[],
    chain: SecretValues,
  ): Promise<void> {
    return this.serialised(async () => {
      let changed = this.adopt(chain);
      for (const holder of holders) {
        changed = this.observe(holder.path, Buffer.from(holder.bytes), chain) || changed;
      }
      if (changed) await this.save();
    });
  }

  /** Re-reads `paths` and keeps each holder exactly where its value still occurs. */
  reconcile(paths: Iterable<string>, chain: SecretValues): Promise<void> {
    return this.serialised(async () => {
      let changed = this.adopt(chain);
      for (const path of new Set(paths)) {
        const bytes = await this.read(path);
        if (bytes === undefined) continue; // unreadable: keep what it held
        changed = this.observe(path, bytes === null ? null : Buffer.from(bytes), chain) || changed;
      }
      for (const [value, entry] of this.entries) {
        if (entry.holders.size === 0) {
          this.entries.delete(value);
          changed = true;
        }
      }
      if (changed) await this.save();
    });
  }

  /** Names follow the chain: a remembered value now under another name takes that name. */
  private adopt(chain: SecretValues): boolean {
    let changed = false;
    for (const [name, value] of [...chain].sort(([a], [b]) => compareCodeUnits(b, a))) {
      const entry = this.entries.get(value);
      if (entry && entry.name !== name) {
        entry.name = name;
        changed = true;
      }
    }
    return changed;
  }

  /** Sets `path` as a holder of exactly the known values its bytes contain (`null`: none). */
  private observe(path: string, bytes: Buffer | null, chain: SecretValues): boolean {
    let changed = false;
    if (bytes !== null) {
      for (const [name, value] of chain) {
        if (value.length < SECRET_MIN_LENGTH || this.entries.has(value)) continue;
        const needle = Buffer.from(value, 'utf8');
        if (bytes.includes(needle)) {
          this.entries.set(value, { name, needle, holders: new Set() });
          changed = true;
        }
      }
    }
    for (const entry of this.entries.values()) {
      const holds = bytes !== null && bytes.includes(entry.needle);
      if (holds && !entry.holders.has(path)) {
        entry.holders.add(path);
        changed = true;
      } else if (!holds && entry.holders.delete(path)) {
        changed = true;
      }
    }
    return changed;
  }

  private async save(): Promise<void> {
    const values = [...this.entries]
      .map(([value, entry]) => ({ name: entry.name, value, holders: [...entry.holders].sort() }))
      .sort((a, b) => compareCodeUnits(a.name, b.name) || compareCodeUnits(a.value, b.value));
    await writeFileAtomic(
      this.file,
      `${JSON.stringify({ schema: SECRET_MEMORY_SCHEMA, values } satisfies z.infer<typeof memorySchema>)}\n`,
    );
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
