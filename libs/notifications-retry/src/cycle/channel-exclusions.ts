import type { ChannelRowCount } from './row-counts';
import type {
  ChannelExclusionReason,
  ExcludedChannel,
  MisconfiguredChannel,
} from '../vocabulary/cycle-report';

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

/** How many channels a summary log line names; the rest are only counted. */
const SAMPLE_SIZE = 20;

/** The `channel-disabled` line of a cycle: the disabled channels and the due rows waiting on them. */
export interface DisabledChannelsLine {
  /** Disabled channels in the catalog, with rows waiting or not. */
  readonly channels: number;
  /** Due rows waiting on them (each channel's count capped as the count is). */
  readonly dueRows: number;
  /** The channels with the most rows waiting, at most SAMPLE_SIZE. */
  readonly sample: ReadonlyArray<{ readonly channel: string; readonly dueRows: number }>;
}

/** Every channel a cycle left out, from the catalog and from the due rows, in one view. */
export interface ChannelExclusions {
  /** Channels with due rows left waiting, as the cycle report lists them. */
  readonly waiting: readonly ExcludedChannel[];
  /** Channels left out for a configuration reason, due rows or not, by key. */
  readonly misconfigured: readonly MisconfiguredChannel[];
  /** Every excluded channel (rows or not) counted per reason; every reason present. */
  readonly channelsByReason: ReadonlyMap<ChannelExclusionReason, number>;
  /** The `channel-disabled` line (DESIGN §5); null when no row waits on a disabled channel. */
  readonly disabled: DisabledChannelsLine | null;
  /**
   * The `channels-excluded` line, about every other reason; null when there is
   * nothing worth a line.
   */
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
  for (const { reason } of all.values()) {
    channelsByReason.set(reason, (channelsByReason.get(reason) ?? 0) + 1);
  }

  // Disabled channels have a line of their own; every other reason shares the summary line.
  const disabledChannels = [...all.values()].filter((excluded) => excluded.reason === 'disabled');
  const others = [...all.values()].filter((excluded) => excluded.reason !== 'disabled');
  const byReason: Record<string, { channels: number; dueRows: number }> = {};
  for (const { reason, dueRows: rows } of others) {
    const tally = (byReason[reason] ??= { channels: 0, dueRows: 0 });
    tally.channels++;
    tally.dueRows += rows;
  }

  const disabledWaiting = disabledChannels.filter((excluded) => excluded.dueRows > 0);
  const disabled =
    disabledWaiting.length === 0
      ? null
      : {
          channels: disabledChannels.length,
          dueRows: disabledWaiting.reduce((sum, excluded) => sum + excluded.dueRows, 0),
          sample: [...disabledWaiting]
            .sort((a, b) => b.dueRows - a.dueRows || (a.channel < b.channel ? -1 : 1))
            .slice(0, SAMPLE_SIZE)
            .map(({ channel, dueRows: rows }) => ({ channel, dueRows: rows })),
        };

  // Worth a line: rows left waiting, or a mistake to fix.
  const reported = others.filter(
    (excluded) => excluded.dueRows > 0 || CONFIGURATION_REASONS.has(excluded.reason),
  );
  const summary =
    reported.length === 0
      ? null
      : {
          channels: others.length,
          dueRows: others.reduce((sum, excluded) => sum + excluded.dueRows, 0),
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
  return { waiting, misconfigured, channelsByReason, disabled, summary };
}
