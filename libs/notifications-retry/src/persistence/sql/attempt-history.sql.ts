import { ATTEMPT_HISTORY_LIMIT } from '../../vocabulary/attempt-history-entry';

/**
 * The database's now as `AttemptHistoryEntry.at` writes it: ISO 8601 in UTC
 * with milliseconds, what `Date.prototype.toISOString()` gives, whatever the
 * session's TimeZone (`to_jsonb(now())` would carry the session's offset).
 */
const NOW_ISO = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One attempt history entry: `fieldsSql` (jsonb: outcome, errorCode,
 * httpStatus, error, latencyMs, from the caller) with the attempt number and
 * the time, which only the statement knows.
 */
export function attemptHistoryEntrySql(fieldsSql: string, attemptSql: string): string {
  return `(${fieldsSql}) || jsonb_build_object('attempt', ${attemptSql}, 'at', ${NOW_ISO})`;
}

/**
 * `historySql` (the row's `attempt_history`) with `entrySql` appended, newest
 * last, keeping the last ATTEMPT_HISTORY_LIMIT entries. A row under the limit,
 * nearly every row, only appends; one at it drops its oldest by a jsonpath
 * slice (also cutting a longer array another writer left). What is not an
 * array (another writer's mistake) starts over: a history must never be the
 * reason an outcome cannot be written.
 */
export function appendAttemptHistorySql(historySql: string, entrySql: string): string {
  const keep = ATTEMPT_HISTORY_LIMIT - 1;
  return `CASE WHEN jsonb_typeof(${historySql}) IS DISTINCT FROM 'array'
                 THEN jsonb_build_array(${entrySql})
               WHEN jsonb_array_length(${historySql}) < ${ATTEMPT_HISTORY_LIMIT}
                 THEN ${historySql} || jsonb_build_array(${entrySql})
               ELSE jsonb_path_query_array(${historySql}, '$[last - ${keep - 1} to last]')
                    || jsonb_build_array(${entrySql}) END`;
}
