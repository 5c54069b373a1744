import {
  DISCARD_STATES,
  InvalidOperationInputError,
  NOTIFICATION_LIST_STATES,
  OUTBOX_LIST_STATES,
  type DiscardFilter,
  type NotificationListQuery,
  type NotificationListState,
  type OperatorAuditQuery,
  type OutboxListState,
} from '@pin/notifications-retry';

type DiscardState = (typeof DISCARD_STATES)[number];
import { parseSince } from '@pin/notifications-retry/ops-cli';

type Source = Record<string, unknown> | undefined;

/** A trimmed, non-empty text field of a query string or form; undefined otherwise. */
export function textField(source: Source, name: string): string | undefined {
  const value = source?.[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A form's `ids`: one checkbox is a string, several an array (JSON: an array). */
export function idsField(source: Source): string[] {
  const value = source?.ids;
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return list.map(String).filter((id) => id.trim() !== '');
}

function oneOf<T extends string>(
  option: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new InvalidOperationInputError(option, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** The rows filter as typed (to fill the form and build links) and as the browser takes it. */
export interface RowsQuery {
  readonly shown: {
    readonly state: NotificationListState;
    readonly channel?: string;
    readonly errorCode?: string;
    readonly since?: string;
    readonly after?: string;
  };
  readonly list: NotificationListQuery;
}

export function readRowsQuery(source: Source, limit?: number): RowsQuery {
  const state = oneOf('state', textField(source, 'state'), NOTIFICATION_LIST_STATES, 'due');
  const channel = textField(source, 'channel');
  const errorCode = textField(source, 'errorCode');
  const since = textField(source, 'since');
  const after = textField(source, 'after');
  const shown = { state, channel, errorCode, since, after };
  return {
    shown: dropUndefined(shown) as RowsQuery['shown'],
    list: dropUndefined({
      state,
      channel,
      errorCode,
      // parseSince throws OpsArgumentError: a 400 naming since.
      since: since !== undefined ? parseSince(since) : undefined,
      after,
      limit,
    }) as unknown as NotificationListQuery,
  };
}

/** A bulk action's scope: a selection of ids, or the filter of the rows page. */
export function readDiscardFilter(source: Source): DiscardFilter {
  const ids = idsField(source);
  const state = textField(source, 'state');
  const since = textField(source, 'since');
  return dropUndefined({
    ids: ids.length > 0 ? ids : undefined,
    channel: textField(source, 'channel'),
    errorCode: textField(source, 'errorCode'),
    since: since !== undefined ? parseSince(since) : undefined,
    // The rows page's other states (terminal, sent, claimed) are not discardable: the whole filter then means none of them.
    state:
      state !== undefined ? oneOf<DiscardState>('state', state, DISCARD_STATES, 'due') : undefined,
  });
}

export function readOutboxState(source: Source): OutboxListState {
  return oneOf('state', textField(source, 'state'), OUTBOX_LIST_STATES, 'parked');
}

export function readAuditQuery(
  source: Source,
  limit?: number,
): {
  shown: Record<string, string | undefined>;
  search: OperatorAuditQuery;
} {
  const fields = {
    actor: textField(source, 'actor'),
    action: textField(source, 'action'),
    since: textField(source, 'since'),
    text: textField(source, 'text'),
    after: textField(source, 'after'),
  };
  return {
    shown: dropUndefined(fields) as Record<string, string>,
    search: dropUndefined({
      ...fields,
      since: fields.since !== undefined ? parseSince(fields.since) : undefined,
      limit,
    }),
  };
}

export function readHours(source: Source): number {
  const hours = textField(source, 'hours');
  if (hours === undefined) return 6;
  const value = Number(hours);
  if (!Number.isInteger(value) || value < 1 || value > 48) {
    throw new InvalidOperationInputError('hours', 'must be a whole number from 1 to 48');
  }
  return value;
}

function dropUndefined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
