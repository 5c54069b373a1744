import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  NotificationChannelEntity,
  OperationsStatus,
  type ListedChannelPause,
} from '@pin/notifications-retry';

/** One channel as the console's channels page shows it. No personal data. */
export interface ChannelOverviewRow {
  readonly key: string;
  /** Null: rows wait on a channel the table does not have. */
  readonly enabled: boolean | null;
  readonly provider: string | null;
  readonly limits: string;
  readonly pause: ListedChannelPause | null;
  /** This instance's breaker for the channel's provider; null before its first call. */
  readonly circuit: string | null;
  readonly excludedBecause: string | null;
  /** Rows still to be sent: Failed with a next attempt, Pending with a send time. */
  readonly waiting: number;
  readonly due: number;
  readonly terminal: number;
  readonly liveClaims: number;
}

/**
 * The channels page: the `notification_channels` rows (settings), joined in
 * memory with the status report (row counts, pauses, this instance's
 * circuits). Channels are few, so two reads and a merge.
 */
@Injectable()
export class ChannelOverview {
  constructor(
    // The host's TypeORM root: the same database the retry module works on.
    private readonly dataSource: DataSource,
    private readonly status: OperationsStatus,
  ) {}

  async list(): Promise<ChannelOverviewRow[]> {
    const [settings, status] = await Promise.all([
      this.dataSource.getRepository(NotificationChannelEntity).find({ order: { key: 'ASC' } }),
      this.status.status(),
    ]);
    const byKey = new Map(settings.map((s) => [s.key, s]));
    const counts = new Map(status.channels.map((c) => [c.channel, c]));
    const pauses = new Map(status.pausedChannels.map((p) => [p.channel, p]));
    const excluded = new Map(status.excludedChannels.map((e) => [e.channel, e.reason]));
    const keys = [...new Set([...byKey.keys(), ...counts.keys()])].sort();
    return keys.map((key) => {
      const setting = byKey.get(key);
      const count = counts.get(key);
      const provider = setting ? (setting.providerKey ?? key) : null;
      return {
        key,
        enabled: setting ? setting.isEnabled : null,
        provider,
        limits: setting ? describeLimits(setting) : '–',
        pause: pauses.get(key) ?? null,
        circuit: provider !== null ? (status.circuits[provider] ?? null) : null,
        excludedBecause: excluded.get(key) ?? null,
        // Everything still to be sent: Failed awaiting a retry and Pending with a send time (due or not).
        waiting: (count?.backlog ?? 0) + (count?.deferred ?? 0),
        due: count?.due ?? 0,
        terminal: count?.terminal ?? 0,
        liveClaims: count?.liveClaims ?? 0,
      };
    });
  }
}

function describeLimits(s: NotificationChannelEntity): string {
  return (
    [
      s.maxAttempts !== null ? `${s.maxAttempts} attempts` : null,
      s.rateLimitPerSec !== null ? `${s.rateLimitPerSec}/s` : null,
      s.maxConcurrency !== null ? `${s.maxConcurrency} at once` : null,
      s.timeoutMs !== null ? `timeout ${s.timeoutMs} ms` : null,
    ]
      .filter((part) => part !== null)
      .join(', ') || 'defaults'
  );
}
