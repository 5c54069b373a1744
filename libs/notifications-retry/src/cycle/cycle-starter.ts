import { Inject, Injectable } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { Clock } from '../clock/clock';
import type { Lease } from '../vocabulary/lease';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { ConnectionPoolBudget } from '../persistence/connection-pool-budget';
import { CycleReporter } from './cycle-reporter';
import { CycleState } from './cycle-state';
import { OutcomeWriterFactory, type GroupCommitSettings } from './outcome-writer';

const GROUP_COMMIT: Omit<GroupCommitSettings, 'maxStatements'> = { maxRows: 100, lingerMs: 2 };
const tracer = trace.getTracer('@pin/notifications-retry');

/** The identity of one run of the cycle. */
export interface CycleRun {
  readonly runId: string;
  readonly correlationId: string;
  /** `performance.now()` before the lease was asked for. */
  readonly started: number;
}

/**
 * Opens a cycle that holds its lease: its span, its outcome writer fenced by
 * the lease, its deadlines, and the `retry-cycle-started` line.
 */
@Injectable()
export class CycleStarter {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly writers: OutcomeWriterFactory,
    private readonly pool: ConnectionPoolBudget,
    private readonly clock: Clock,
    private readonly reporter: CycleReporter,
  ) {}

  /** `now`: the due threshold and the start of backoff; default the Clock's now. */
  begin(run: CycleRun, lease: Lease, now: Date | undefined): CycleState {
    const span = tracer.startSpan('notifications.retry.cycle', {
      attributes: {
        'notifications.run_id': run.runId,
        'notifications.correlation_id': run.correlationId,
        'notifications.fencing_token': lease.fencingToken,
      },
    });
    // Measured from before the acquire was sent: the local view of the lease ends before the database's.
    const leaseEnds = run.started + this.options.lockTtlMs;
    const writer = this.writers.forLease(
      lease,
      { ...GROUP_COMMIT, maxStatements: this.pool.writeStatements },
      leaseEnds,
    );
    const cycle = new CycleState(
      run.runId,
      run.correlationId,
      now ?? this.clock.now(),
      lease,
      span,
      writer,
      run.started,
      run.started + this.options.maxCycleDurationMs,
      leaseEnds,
    );
    this.reporter.cycleStarted(cycle);
    return cycle;
  }
}
