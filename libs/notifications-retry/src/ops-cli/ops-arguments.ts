import { OpsArgumentError } from './ops-argument.error';

const RELATIVE = /^(\d+)(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--since`: an ISO 8601 time, or a duration back from now (`30m`, `24h`, `7d`). */
export function parseSince(value: string, now: Date = new Date()): Date {
  const relative = RELATIVE.exec(value.trim());
  if (relative) {
    const unit = relative[2] as keyof typeof UNIT_MS;
    return new Date(now.getTime() - Number(relative[1]) * UNIT_MS[unit]);
  }
  const at = /^\d{4}-\d{2}-\d{2}/.test(value.trim())
    ? new Date(value.trim())
    : new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) {
    throw new OpsArgumentError(
      `--since must be an ISO 8601 time (2026-12-01T09:00:00Z) or a duration back from now (30m, 24h, 7d); got ${JSON.stringify(value)}`,
    );
  }
  return at;
}

/** A positive integer option (`--limit`, `--fencing-token`). */
export function parsePositiveInteger(option: string, value: string, max: number): number {
  const parsed = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < 1 || parsed > max) {
    throw new OpsArgumentError(
      `${option} must be an integer from 1 to ${max}; got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

/** A text option that must say something (`--channel`, `--reason`). */
export function parseText(option: string, value: string): string {
  if (value.trim() === '') throw new OpsArgumentError(`${option} must not be empty`);
  return value.trim();
}

/** `--ids a,b,c`. */
export function parseIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0)
    throw new OpsArgumentError('--ids must list notification ids, comma-separated');
  return ids;
}
