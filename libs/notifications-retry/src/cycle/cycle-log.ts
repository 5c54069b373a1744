import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compileDeleteExpiredCycles } from '../persistence/sql/delete-expired-cycles.sql';
import { compileRecordCycle } from '../persistence/sql/record-cycle.sql';
import { SqlRunner } from '../persistence/sql-runner';
import type { CompletedCycleReport } from '../vocabulary/cycle-report';
import { CycleReporter } from './cycle-reporter';
import type { CycleState } from './cycle-state';

/** The retention runs this often at most: the log grows by a row per cycle, not faster. */
export const CYCLE_LOG_PRUNE_INTERVAL_MS = 60_000;
/** Rows per delete statement: a short statement, a short lock. */
export const CYCLE_LOG_PRUNE_BATCH = 500;
/** Statements per retention run at most: a backlog (a lowered retention) goes over a few minutes. */
const CYCLE_LOG_PRUNE_BATCHES = 10;

/**
 * The cycle log (DESIGN §8): at the end of every completed cycle its owner
 * writes one `notification_retry_cycles` row (when, owner, duration, counts,
 * why it stopped), and deletes rows older than `cycleLogRetentionMs` at most
 * once a minute. Like the row counts (RowCensus), a write that fails is
 * logged (`cycle-log-failed`) and costs a row of the log, never the cycle.
 *
 * Not fenced by the lease: the row describes what this owner did, which is
 * as true after a lost lease (a cycle that stopped `lease-lost` is one an
 * operator wants to see) as before; it schedules nothing, and its run id is
 * its own, so no other owner's write can collide with it.
 */
@Injectable()
export class CycleLog {
  private readonly recordStatement;
  private readonly pruneStatement;
  private lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
    private readonly reporter: CycleReporter,
  ) {
    this.recordStatement = compileRecordCycle(dataSource);
    this.pruneStatement = compileDeleteExpiredCycles(dataSource);
  }

  /** Never rejects. */
  async record(cycle: CycleState, report: CompletedCycleReport): Promise<void> {
    try {
      await this.sql.run(
        this.recordStatement,
        this.recordStatement.values({
          runId: report.runId,
          correlationId: report.correlationId,
          instanceId: cycle.lease.owner,
          fencingToken: String(report.fencingToken),
          startedAt: report.startedAt,
          finishedAt: report.finishedAt,
          durationMs: report.durationMs,
          stopReason: report.stopReason,
          ...report.counts,
        }),
        cycle.connectBy,
      );
    } catch (error) {
      this.reporter.cycleLogFailed(cycle, 'record', error);
    }
    await this.prune(cycle);
  }

  private async prune(cycle: CycleState): Promise<void> {
    if (performance.now() - this.lastPruneAt < CYCLE_LOG_PRUNE_INTERVAL_MS) return;
    this.lastPruneAt = performance.now();
    try {
      for (let batch = 0; batch < CYCLE_LOG_PRUNE_BATCHES; batch++) {
        const [row] = await this.sql.run<{ deleted: number }>(
          this.pruneStatement,
          this.pruneStatement.values({
            retentionMs: this.options.cycleLogRetentionMs,
            limit: CYCLE_LOG_PRUNE_BATCH,
          }),
          cycle.connectBy,
        );
        if ((row?.deleted ?? 0) < CYCLE_LOG_PRUNE_BATCH) return;
      }
    } catch (error) {
      this.reporter.cycleLogFailed(cycle, 'retention', error);
    }
  }
}
