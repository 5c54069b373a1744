import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { errorText } from '../vocabulary/error-text';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { OutboxRelayMetrics } from './outbox-relay-metrics';
import { OutboxRelayRepository } from './outbox-relay.repository';

/** At most this many statements per run, so one run never monopolises a connection for long. */
const MAX_BATCHES_PER_RUN = 100;

/**
 * Deletes published outbox rows older than `outboxRelay.retentionMs`, in
 * batches of `retentionBatchSize`, every `retentionIntervalMs` where the relay
 * runs. Parked and unpublished rows are never deleted.
 */
@Injectable()
export class OutboxRetention implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('NotificationsOutboxRelay');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly repository: OutboxRelayRepository,
    @Inject(OutboxRelayMetrics) private readonly metrics: OutboxRelayMetrics | null,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.outboxRelay.enabled) return;
    this.timer = setInterval(() => {
      if (!this.running) {
        this.running = this.runOnce()
          .catch((error: unknown) => {
            this.logger.error({
              msg: 'outbox-retention-error',
              event: 'outbox-retention-error',
              error: errorText(error),
            });
            return 0;
          })
          .finally(() => (this.running = null));
      }
    }, this.options.outboxRelay.retentionIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Deletes what is due now, batch after batch; returns the number of rows deleted. */
  async runOnce(): Promise<number> {
    const { retentionMs, retentionBatchSize } = this.options.outboxRelay;
    let deleted = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      const rows = await this.repository.deletePublished(retentionMs, retentionBatchSize);
      deleted += rows;
      this.metrics?.retention(rows);
      if (rows < retentionBatchSize) break;
    }
    if (deleted > 0) {
      this.logger.log({
        msg: 'outbox-retention-deleted',
        event: 'outbox-retention-deleted',
        rows: deleted,
        retentionMs,
      });
    }
    return deleted;
  }
}
