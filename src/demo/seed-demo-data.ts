import type { DataSource } from 'typeorm';
import { DEMO_CHANNELS } from './demo-channels';
import { buildDemoNotifications } from './demo-notifications';

export interface DemoSeedResult {
  /** Rows actually inserted; zero when an earlier run seeded them already. */
  readonly channelsInserted: number;
  readonly notificationsInserted: number;
}

/**
 * Writes the demo channel catalog and notifications, in one transaction, on a
 * migrated database. Safe to run again: rows that exist (same key, same
 * deterministic id) are left as they are, so a restart neither duplicates the
 * demo nor undoes what the worker or an operator did to it since.
 */
export function seedDemoData(
  dataSource: DataSource,
  now: Date = new Date(),
): Promise<DemoSeedResult> {
  return dataSource.transaction(async (manager) => {
    let channelsInserted = 0;
    for (const channel of DEMO_CHANNELS) {
      const inserted: unknown[] = await manager.query(
        `INSERT INTO notification_channels
           (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms, backoff_max_ms,
            backoff_multiplier, timeout_ms, rate_limit_per_sec, max_concurrency)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (key) DO NOTHING
         RETURNING key`,
        [
          channel.key,
          channel.isEnabled,
          channel.providerKey,
          channel.maxAttempts,
          channel.backoffKind,
          channel.backoffBaseMs,
          channel.backoffMaxMs,
          channel.backoffMultiplier,
          channel.timeoutMs,
          channel.rateLimitPerSec,
          channel.maxConcurrency,
        ],
      );
      channelsInserted += inserted.length;
    }

    let notificationsInserted = 0;
    for (const row of buildDemoNotifications(now)) {
      const inserted: unknown[] = await manager.query(
        `INSERT INTO notifications
           (id, tenant_id, channel, recipient_address, subject, body, status, attempts, next_attempt_at,
            scheduled_at, provider_message_id, last_error_code, last_error_message, sent_at, created_at,
            updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
         ON CONFLICT (id) DO NOTHING
         RETURNING id`,
        [
          row.id,
          row.tenantId,
          row.channel,
          row.recipientAddress,
          row.subject,
          row.body,
          row.status,
          row.attempts,
          row.nextAttemptAt,
          row.scheduledAt,
          row.providerMessageId,
          row.lastErrorCode,
          row.lastErrorMessage,
          row.sentAt,
          row.createdAt,
          row.updatedAt,
        ],
      );
      notificationsInserted += inserted.length;
    }
    return { channelsInserted, notificationsInserted };
  });
}
