import { FleetError } from '@fleet/core/node';

const UNITS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** `90d`, `12h`, `10m`, `30s`, `2w` (or a sum: `1h30m`) in milliseconds; `USAGE` otherwise. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const parts = [...trimmed.matchAll(/(\d+)([smhdw])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed) {
    throw new FleetError(
      'USAGE',
      `not a duration: ${JSON.stringify(text)} (use e.g. 90d, 12h, 10m)`,
    );
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[p[2] as string] as number), 0);
  if (ms <= 0 || !Number.isSafeInteger(ms)) {
    throw new FleetError('USAGE', `duration out of range: ${JSON.stringify(text)}`);
  }
  return ms;
}
