import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { DistributedLock } from '../locking/distributed-lock';
import type { Lease } from '../vocabulary/lease';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { PreparedStatementMode } from '../persistence/prepared-statement-mode';
import { CycleReporter } from './cycle-reporter';
import type { CycleState } from './cycle-state';
import type { LeaseAtStop } from './worker-stop-report';

/**
 * The cycle's hold on the lease, across ticks: a lease this instance could not
 * release (the database was gone when its cycle ended) is released before the
 * next acquire, so the worker resumes on its next tick instead of waiting out
 * the TTL behind its own stale lease.
 */
@Injectable()
export class CycleLease {
  private unreleased: Lease | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly lock: DistributedLock,
    private readonly clock: Clock,
    private readonly preparedStatements: PreparedStatementMode,
    private readonly reporter: CycleReporter,
  ) {}

  /** This instance's lease for one cycle, or null when another instance holds it. */
  async acquire(): Promise<Lease | null> {
    // The tick's first database work, once per process (a no-op after): its line comes before any
    // line of a cycle, and before the cycle holds a lease.
    await this.preparedStatements.named();
    if (this.unreleased) {
      // Owner and fencing token checked by release(): a no-op if anyone took over meanwhile. Not
      // recorded as completed even if it was: the record would carry this tick's time.
      await this.lock.release(this.unreleased);
      this.unreleased = null;
    }
    const lease = await this.lock.acquire(
      this.options.lockKey,
      this.options.instanceId,
      this.options.lockTtlMs,
    );
    // A host's clock given as a plain value may lack the hook: it keeps its own time then.
    if (lease?.acquiredAt)
      (this.clock as Partial<Clock>).observeDatabaseTime?.call(this.clock, lease.acquiredAt);
    return lease;
  }

  /**
   * After the cycle's last write. A completed cycle is recorded with the
   * release (the lease row says when), which is what /health reads on every
   * instance. A lease found lost is someone else's now: nothing to release.
   * A release that fails keeps the lease, to be released before the next acquire.
   */
  async release(cycle: CycleState, cycleCompleted: boolean): Promise<LeaseAtStop> {
    if (cycle.leaseLoss) return 'not-held';
    try {
      await this.lock.release(cycle.lease, { cycleCompleted });
      return 'released';
    } catch (error) {
      this.unreleased = cycle.lease;
      this.reporter.leaseReleaseFailed(cycle, error);
      return 'release-failed';
    }
  }
}
