import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compileReleaseClaims } from '../persistence/sql/release-claims.sql';
import { SqlRunner } from '../persistence/sql-runner';
import { retryPassingErrors } from '../persistence/retry-passing-errors';
import { RetryMetrics } from '../observability/retry-metrics';
import type { ClaimedRow } from './claimed-row';

/**
 * Hands claimed rows back untouched, so another instance (or the next cycle)
 * takes them at once instead of after the claim lapses (DESIGN §3.7).
 */
@Injectable()
export class ClaimRelease {
  private readonly statement;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
    private readonly metrics: RetryMetrics,
  ) {
    this.statement = compileReleaseClaims(dataSource);
  }

  /**
   * How many were still this worker's to release. A passing failure is tried
   * again while the claims live (after that, releasing gains nothing).
   */
  async release(rows: readonly ClaimedRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const values = this.statement.values({
      ids: rows.map((row) => row.id),
      claimTokens: rows.map((row) => row.claimToken),
    });
    const released = await retryPassingErrors(
      () => this.sql.run<{ id: string }>(this.statement, values),
      {
        giveUpAt: Math.min(...rows.map((row) => row.claimedUntil)),
        onRetry: () => this.metrics.statementRetried('release'),
      },
    );
    return released.length;
  }
}
