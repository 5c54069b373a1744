import type { PersonalValues } from '../privacy/personal-values';
import { redactStoredCode } from '../privacy/redact-stored-error';
import { redactPersonalData } from '../privacy/redact-personal-data';
import type { AttemptHistoryEntry } from '../vocabulary/attempt-history-entry';

/**
 * A row's `attempt_history` as an operator may see it, newest last. The column
 * is jsonb any writer of the table may have filled (another module, a script,
 * the default '[]'): anything that is not an array gives no entries, an entry
 * that is not an object is dropped, a field of the wrong type is null, and
 * every text is redacted again against the row's own values.
 */
export function readAttemptHistory(stored: unknown, values: PersonalValues): AttemptHistoryEntry[] {
  const parsed = typeof stored === 'string' ? parseJson(stored) : stored;
  if (!Array.isArray(parsed)) return [];
  const entries: AttemptHistoryEntry[] = [];
  for (const item of parsed as unknown[]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const entry = item as Record<string, unknown>;
    const errorCode = text(entry.errorCode);
    const error = text(entry.error);
    entries.push({
      attempt: integer(entry.attempt) ?? 0,
      at: text(entry.at) ?? '',
      outcome: text(entry.outcome) ?? 'unknown',
      errorCode: errorCode === null ? null : redactStoredCode(errorCode, values),
      httpStatus: integer(entry.httpStatus),
      error: error === null ? null : redactPersonalData(error, values),
      latencyMs: finite(entry.latencyMs),
    });
  }
  return entries;
}

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function integer(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
