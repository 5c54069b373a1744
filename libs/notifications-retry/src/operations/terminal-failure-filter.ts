import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';

/** Which terminal Failed rows an operation looks at; an absent field matches any. */
export interface TerminalFailureFilter {
  readonly channel?: string;
  readonly errorCode?: string;
  /** Rows that became terminal at or after this time (their `updated_at`). */
  readonly since?: Date;
}

/** A redrive may also name rows one by one. */
export interface RedriveFilter extends TerminalFailureFilter {
  readonly ids?: readonly string[];
}

const MAX_KEY_LENGTH = 200;
export const MAX_REDRIVE_IDS = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a filter; returns it normalised (trimmed, ids lower-cased and deduplicated). */
export function validateRedriveFilter(filter: RedriveFilter): RedriveFilter {
  const channel = optionalKey('channel', filter.channel);
  const errorCode = optionalKey('errorCode', filter.errorCode);
  let since: Date | undefined;
  if (filter.since !== undefined) {
    if (!(filter.since instanceof Date) || Number.isNaN(filter.since.getTime())) {
      throw new InvalidOperationInputError('since', 'must be a valid date and time');
    }
    since = filter.since;
  }
  let ids: string[] | undefined;
  if (filter.ids !== undefined) {
    if (!Array.isArray(filter.ids) || filter.ids.length === 0) {
      throw new InvalidOperationInputError('ids', 'must list at least one notification id');
    }
    if (filter.ids.length > MAX_REDRIVE_IDS) {
      throw new InvalidOperationInputError('ids', `must list at most ${MAX_REDRIVE_IDS} ids`);
    }
    const given: readonly unknown[] = filter.ids;
    const bad = given.find((id) => typeof id !== 'string' || !UUID.test(id.trim()));
    if (bad !== undefined) {
      throw new InvalidOperationInputError('ids', `must be UUIDs; got ${JSON.stringify(bad)}`);
    }
    ids = [...new Set((given as string[]).map((id) => id.trim().toLowerCase()))];
  }
  return {
    ...(channel !== undefined ? { channel } : {}),
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(ids !== undefined ? { ids } : {}),
  };
}

/** True when the filter narrows nothing: every terminal row would match. */
export function isEmptyFilter(filter: RedriveFilter): boolean {
  return (
    filter.channel === undefined &&
    filter.errorCode === undefined &&
    filter.since === undefined &&
    filter.ids === undefined
  );
}

/** The filter as the named values of the terminal-failure statements, null meaning any. */
export function filterValues(filter: TerminalFailureFilter): {
  channel: string | null;
  errorCode: string | null;
  since: Date | null;
} {
  return {
    channel: filter.channel ?? null,
    errorCode: filter.errorCode ?? null,
    since: filter.since ?? null,
  };
}

/** A redrive filter's values: {@link filterValues} and the ids, null meaning any. */
export function redriveFilterValues(
  filter: RedriveFilter,
): ReturnType<typeof filterValues> & { ids: string[] | null } {
  return { ...filterValues(filter), ids: filter.ids ? [...filter.ids] : null };
}

/** The filter as it is stored in the audit (JSON, no personal data). */
export function describeFilter(filter: RedriveFilter): Record<string, unknown> {
  return {
    ...(filter.channel !== undefined ? { channel: filter.channel } : {}),
    ...(filter.errorCode !== undefined ? { errorCode: filter.errorCode } : {}),
    ...(filter.since !== undefined ? { since: filter.since.toISOString() } : {}),
    ...(filter.ids !== undefined ? { ids: filter.ids } : {}),
  };
}

function optionalKey(option: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > MAX_KEY_LENGTH) {
    throw new InvalidOperationInputError(
      option,
      `must be a non-empty text of at most ${MAX_KEY_LENGTH} characters; got ${JSON.stringify(value)}`,
    );
  }
  return value.trim();
}
