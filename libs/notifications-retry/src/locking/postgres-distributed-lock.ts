import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compileAcquireLease } from '../persistence/sql/acquire-lease.sql';
import { leaseFenceSql } from '../persistence/sql/lease-fence.sql';
import { compileReadLastCompletedCycle } from '../persistence/sql/read-last-completed-cycle.sql';
import { compileReleaseLease } from '../persistence/sql/release-lease.sql';
import { SqlRunner } from '../persistence/sql-runner';
import { retryPassingErrors } from '../persistence/retry-passing-errors';
import { RetryMetrics } from '../observability/retry-metrics';
import type { CompletedCycleRecord } from './completed-cycle-record';
import { DistributedLock, type LockReleaseOptions } from './distributed-lock';
import type { Lease } from '../vocabulary/lease';
import type { LeaseFence } from '../vocabulary/lease-fence';

/** How long a release is tried again after passing failures. */
const RELEASE_RETRY_MS = 2_000;

/**
 * Lease in `distributed_locks`. One statement each way, and every time
 * comparison uses the database's clock, so clock skew between app instances
 * cannot make two of them believe they own the lease. The release of a
 * completed cycle records it in the lease row (`last_completed_at`,
 * `last_completed_by`), which /health reads on every instance.
 */
@Injectable()
export class PostgresDistributedLock extends DistributedLock {
  readonly fence: LeaseFence;
  private readonly acquireLease;
  private readonly releaseLease;
  private readonly readLastCompletedCycle;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
    private readonly metrics: RetryMetrics,
  ) {
    super();
    this.acquireLease = compileAcquireLease(dataSource);
    this.releaseLease = compileReleaseLease(dataSource);
    this.readLastCompletedCycle = compileReadLastCompletedCycle(dataSource);
    this.fence = {
      sql: leaseFenceSql(dataSource),
      params: (lease) => [lease.key, lease.owner, lease.fencingToken],
    };
  }

  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    const [row] = await this.sql.run<{ fencing_token: string; acquired_at: Date }>(
      this.acquireLease,
      this.acquireLease.values({ key, owner, ttlMs }),
    );
    return row
      ? { key, owner, fencingToken: Number(row.fencing_token), acquiredAt: row.acquired_at }
      : null;
  }

  /**
   * Sent again for a passing failure for a moment: a release that did not
   * land keeps the others waiting for the TTL, and loses the record of a
   * completed cycle. Safe to repeat (owner and token matched, expiry set now).
   */
  async release(lease: Lease, options: LockReleaseOptions = {}): Promise<void> {
    const values = this.releaseLease.values({
      key: lease.key,
      owner: lease.owner,
      fencingToken: lease.fencingToken,
      cycleCompleted: options.cycleCompleted === true,
    });
    await retryPassingErrors(() => this.sql.run(this.releaseLease, values), {
      giveUpAt: performance.now() + RELEASE_RETRY_MS,
      onRetry: () => this.metrics.statementRetried('lease-release'),
    });
  }

  override async lastCompletedCycle(key: string): Promise<CompletedCycleRecord> {
    const [row] = await this.sql.run<{
      database_now: Date;
      last_completed_at: Date | null;
      last_completed_by: string | null;
    }>(this.readLastCompletedCycle, this.readLastCompletedCycle.values({ key }));
    return { at: row.last_completed_at, by: row.last_completed_by, now: row.database_now };
  }
}
