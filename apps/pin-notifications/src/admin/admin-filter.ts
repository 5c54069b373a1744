import type { RedriveFilter } from '@pin/notifications-retry';
import { parseSince } from '@pin/notifications-retry/ops-cli';

/** The filter as typed, to fill the form back in. */
export interface PageFilter {
  readonly channel?: string;
  readonly errorCode?: string;
  readonly since?: string;
}

/** The filter fields of a query string or form, as typed (for the page) and parsed (for the library). */
export function readFilter(source: Record<string, unknown> | undefined): {
  page: PageFilter;
  filter: RedriveFilter;
} {
  const text = (name: string): string | undefined => {
    const value = source?.[name];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const channel = text('channel');
  const errorCode = text('errorCode');
  const since = text('since');
  return {
    page: {
      ...(channel !== undefined ? { channel } : {}),
      ...(errorCode !== undefined ? { errorCode } : {}),
      ...(since !== undefined ? { since } : {}),
    },
    filter: {
      ...(channel !== undefined ? { channel } : {}),
      ...(errorCode !== undefined ? { errorCode } : {}),
      // parseSince throws OpsArgumentError: a 400 naming --since, read as "since" here.
      ...(since !== undefined ? { since: parseSince(since) } : {}),
    },
  };
}
