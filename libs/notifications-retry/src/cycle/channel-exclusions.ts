import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import type { ChannelRowCount } from './row-counts';
import type { ChannelExclusionReason, ExcludedChannel, MisconfiguredChannel } from './cycle-report';

/** Room after the slowest possible call for its outcome write inside the lease. */
export const LEASE_SAFETY_MARGIN_MS = 5_000;

/**
 * Reasons that are a mistake in the deployment or the catalog, not a decision:
 * an operator disabling a channel, or turning a stub's feature flag off, is
 * fine; a channel without a valid row, a provider key no adapter serves, or a
 * timeout the lease cannot hold leaves rows waiting that nobody meant to wait.
 */
export const CONFIGURATION_REASONS: ReadonlySet<ChannelExclusionReason> = new Set([
  'not-configured',
  'no-provider-adapter',
  'timeout-exceeds-lease',
]);

export const EXCLUSION_REASONS: readonly ChannelExclusionReason[] = [
  'disabled',
  'not-configured',
  'no-provider-adapter',
  'provider-disabled',
  'paused',
  'circuit-open',
  'timeout-exceeds-lease',
];

/** The longest channel timeout a cycle can take: a call started at the deadline, with its margin, ends inside the lease. */
export function leaseAllowanceMs(options: ResolvedNotificationsRetryOptions): number {
  return (
    options.lockTtlMs - options.maxCycleDurationMs - options.settleMarginMs - LEASE_SAFETY_MARGIN_MS
  );
}

/** How many channels a summary log line names; the rest are only counted. */
const SAMPLE_SIZE = 20;

/** Every channel a cycle left out, from the catalog and from the due rows, in one view. */
export interface ChannelExclusions {
  /** Channels with due rows left waiting, as the cycle report lists them. */
  readonly waiting: readonly ExcludedChannel[];
  /** Channels left out for a configuration reason, due rows or not, by key. */
  readonly misconfigured: readonly MisconfiguredChannel[];
  /** Every excluded channel (rows or not) counted per reason; every reason present. */
  readonly channelsByReason: ReadonlyMap<ChannelExclusionReason, number>;
  /** The one log line of the cycle about them; null when there is nothing worth a line. */
  readonly summary: Readonly<Record<string, unknown>> | null;
}

/**
 * `catalog` holds the catalog's channels the cycle left out and why; `due`
 * the due rows of every channel outside the cycle, which also covers channels
 * the catalog does not know (their rows have no valid configuration).
 */
export function channelExclusions(
  catalog: ReadonlyMap<string, ChannelExclusionReason>,
  due: readonly ChannelRowCount[],
): ChannelExclusions {
  const dueRows = new Map(due.map(({ channel, rows }) => [channel, rows]));
  const all = new Map<string, ExcludedChannel>();
  for (const [channel, reason] of catalog) {
    all.set(channel, { channel, reason, dueRows: dueRows.get(channel) ?? 0 });
  }
  for (const { channel, rows } of due) {
    if (!all.has(channel) && rows > 0)
      all.set(channel, { channel, reason: 'not-configured', dueRows: rows });
  }

  const waiting = due
    .filter(({ rows }) => rows > 0)
    .map(({ channel }) => all.get(channel) as ExcludedChannel);
  const misconfigured = [...all.values()]
    .filter((excluded) => CONFIGURATION_REASONS.has(excluded.reason))
    .map(({ channel, reason }) => ({ channel, reason }))
    .sort((a, b) => (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0));
  const channelsByReason = new Map(EXCLUSION_REASONS.map((reason) => [reason, 0]));
  const byReason: Record<string, { channels: number; dueRows: number }> = {};
  for (const { reason, dueRows: rows } of all.values()) {
    channelsByReason.set(reason, (channelsByReason.get(reason) ?? 0) + 1);
    const tally = (byReason[reason] ??= { channels: 0, dueRows: 0 });
    tally.channels++;
    tally.dueRows += rows;
  }

  // Worth a line: rows left waiting, or a mistake to fix. A disabled channel with nothing due is not.
  const reported = [...all.values()].filter(
    (excluded) => excluded.dueRows > 0 || CONFIGURATION_REASONS.has(excluded.reason),
  );
  const summary =
    reported.length === 0
      ? null
      : {
          channels: all.size,
          dueRows: [...all.values()].reduce((sum, excluded) => sum + excluded.dueRows, 0),
          misconfigured: misconfigured.length,
          byReason,
          sample: [...reported]
            .sort(
              (a, b) =>
                Number(CONFIGURATION_REASONS.has(b.reason)) -
                  Number(CONFIGURATION_REASONS.has(a.reason)) || b.dueRows - a.dueRows,
            )
            .slice(0, SAMPLE_SIZE),
        };
  return { waiting, misconfigured, channelsByReason, summary };
}
