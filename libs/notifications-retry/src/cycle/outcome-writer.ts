import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionWaitTimeoutError } from '../errors/connection-wait-timeout.error';
import { DistributedLock } from '../locking/distributed-lock';
import type { Lease } from '../locking/lease';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import {
  compileSettleRows,
  SETTLED_ROW_ARRAYS,
  type SettledRowArray,
  type SettleRowsValue,
} from '../persistence/sql/settle-rows.sql';
import { fenceValues } from '../persistence/sql/lease-fence-parameters';
import type { BoundStatement } from '../persistence/sql/sql-statement';
import { SqlRunner } from '../persistence/sql-runner';
import { isPassingDatabaseError } from '../persistence/database-error-kind';
import { retryPassingErrors } from '../persistence/retry-passing-errors';
import { RetryMetrics, type RetriedStatement } from '../observability/retry-metrics';
import type { LeaseLossCause } from './lease-loss';
import type { OutcomeWriteResult } from './outcome-write-result';
import type { RowOutcome } from './row-settlement';
import type { RowTransition } from './row-transition';

/** How outcomes are grouped into statements. */
export interface GroupCommitSettings {
  /** Rows per statement at most. */
  readonly maxRows: number;
  /** How long the first outcome of a group waits for others to join it. */
  readonly lingerMs: number;
  /** Statements in flight at once (each takes a pooled connection for its round trip). */
  readonly maxStatements: number;
}

/**
 * Room kept at the end of a row's claim for its hold: an outcome write that
 * keeps failing for a passing reason is tried again until then, and the hold
 * gets what is left.
 */
export const HOLD_RESERVE_MS = 250;

interface Pending {
  readonly outcome: RowOutcome;
  readonly resolve: (result: OutcomeWriteResult) => void;
}

type StatementResult =
  | { readonly kind: 'run'; readonly settled: ReadonlySet<string> }
  | { readonly kind: 'lease-lost'; readonly cause: LeaseLossCause };

/** Compiles the settle statement once; makes one writer per cycle (per lease). */
@Injectable()
export class OutcomeWriterFactory {
  private readonly statement: BoundStatement<SettleRowsValue>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly lock: DistributedLock,
    private readonly sql: SqlRunner,
    private readonly metrics: RetryMetrics,
  ) {
    this.statement = compileSettleRows(dataSource, lock.fence);
  }

  forLease(lease: Lease, settings: GroupCommitSettings, connectBy: number): OutcomeWriter {
    const fence = fenceValues(this.lock.fence.params(lease));
    return new OutcomeWriter(
      (outcomes) =>
        this.sql.run<{ leased: boolean; settled: string[] }>(
          this.statement,
          this.statement.values({ ...fence, ...columnArrays(outcomes) }),
          connectBy,
        ),
      settings,
      (statement) => this.metrics.statementRetried(statement),
    );
  }
}

/**
 * Settlement (DESIGN §3.5) for one cycle: outcomes that finish close together
 * go out in one statement (group commit). A statement that fails for a
 * passing reason (a lock or statement timeout, a serialization failure, a
 * lost connection: the runner destroys that client) is sent again with
 * backoff while its rows' claims live; one that fails otherwise is retried
 * row by row, so one bad row never takes the others with it; a row whose own
 * write still fails gets its hold written instead. Once a statement finds the
 * lease gone, nothing more is sent.
 */
export class OutcomeWriter {
  private pending: Pending[] = [];
  private statements = 0;
  private linger: NodeJS.Timeout | null = null;
  private lost: LeaseLossCause | null = null;

  constructor(
    private readonly send: (
      outcomes: readonly RowOutcome[],
    ) => Promise<Array<{ leased: boolean; settled: string[] }>>,
    private readonly settings: GroupCommitSettings,
    private readonly onRetry: (statement: RetriedStatement) => void = () => undefined,
  ) {}

  /** Why the lease was found lost, if a statement found it so. */
  get leaseLoss(): LeaseLossCause | null {
    return this.lost;
  }

  write(outcome: RowOutcome): Promise<OutcomeWriteResult> {
    if (this.lost) return Promise.resolve({ kind: 'lease-lost', cause: this.lost });
    return new Promise((resolve) => {
      this.pending.push({ outcome, resolve });
      if (this.pending.length >= this.settings.maxRows) this.flush();
      else this.linger ??= setTimeout(() => this.flush(), this.settings.lingerMs);
    });
  }

  private flush(): void {
    if (this.linger) clearTimeout(this.linger);
    this.linger = null;
    while (this.pending.length > 0 && this.statements < this.settings.maxStatements) {
      const group = this.pending.splice(0, this.settings.maxRows);
      this.statements++;
      void this.writeGroup(group).finally(() => {
        this.statements--;
        // What queued behind a full set of statements has waited long enough already.
        if (this.pending.length > 0) this.flush();
      });
    }
  }

  private async writeGroup(group: readonly Pending[]): Promise<void> {
    if (this.lost) return this.resolveLost(group, this.lost);
    const outcomes = group.map((p) => p.outcome);
    let result: StatementResult;
    try {
      result = await this.runRetrying('settle', outcomes, claimEnd(outcomes) - HOLD_RESERVE_MS);
    } catch (error) {
      // Passing failures were tried again until the claims were about to lapse: no time is left
      // for row-by-row writes, only for the holds.
      if (group.length === 1 || isPassingDatabaseError(error)) {
        const results = await this.holdAll(outcomes, error);
        group.forEach((pending, i) => pending.resolve(results[i]));
        return;
      }
      // One statement, one atomic write: none of the group is written. Each row on its own now.
      for (const pending of group) pending.resolve(await this.writeOne(pending.outcome));
      return;
    }
    if (result.kind === 'lease-lost') return this.resolveLost(group, result.cause);
    for (const { outcome, resolve } of group) resolve(this.resultOf(outcome, result.settled));
  }

  private async writeOne(outcome: RowOutcome): Promise<OutcomeWriteResult> {
    if (this.lost) return { kind: 'lease-lost', cause: this.lost };
    try {
      const result = await this.runRetrying(
        'settle',
        [outcome],
        outcome.row.claimedUntil - HOLD_RESERVE_MS,
      );
      return result.kind === 'lease-lost' ? result : this.resultOf(outcome, result.settled);
    } catch (error) {
      const [held] = await this.holdAll([outcome], error);
      return held;
    }
  }

  /**
   * The outcomes' own writes failed: record each attempt and hold its row by
   * backoff instead (one statement for them all, sent again for passing
   * failures until their claims lapse). A row without a hold stays as it is.
   */
  private async holdAll(
    outcomes: readonly RowOutcome[],
    error: unknown,
  ): Promise<OutcomeWriteResult[]> {
    const holds = outcomes.filter((o) => o.hold);
    const results = new Map<RowOutcome, OutcomeWriteResult>();
    if (holds.length > 0 && !this.lost) {
      try {
        const result = await this.runRetrying(
          'hold',
          holds.map((o) => ({ ...o, transition: o.hold as RowTransition, event: null })),
          claimEnd(holds),
        );
        for (const o of holds) {
          results.set(
            o,
            result.kind === 'lease-lost'
              ? result
              : result.settled.has(o.row.id)
                ? { kind: 'held', hold: o.hold as RowTransition, error }
                : { kind: 'claim-lost' },
          );
        }
      } catch (holdError) {
        for (const o of holds) results.set(o, { kind: 'not-written', error: holdError });
      }
    }
    return outcomes.map((o) => results.get(o) ?? { kind: 'not-written', error });
  }

  private runRetrying(
    statement: RetriedStatement,
    outcomes: readonly RowOutcome[],
    giveUpAt: number,
  ): Promise<StatementResult> {
    return retryPassingErrors(() => this.run(outcomes), {
      giveUpAt,
      onRetry: () => this.onRetry(statement),
    });
  }

  private async run(outcomes: readonly RowOutcome[]): Promise<StatementResult> {
    try {
      const [row] = await this.send(outcomes);
      if (!row?.leased) return this.lose('fence-refused');
      return { kind: 'run', settled: new Set(row.settled) };
    } catch (error) {
      if (error instanceof ConnectionWaitTimeoutError)
        return this.lose('no-connection-before-lease-end');
      throw error;
    }
  }

  private lose(cause: LeaseLossCause): StatementResult {
    this.lost ??= cause;
    return { kind: 'lease-lost', cause };
  }

  private resultOf(outcome: RowOutcome, settled: ReadonlySet<string>): OutcomeWriteResult {
    return settled.has(outcome.row.id)
      ? { kind: 'written', settleMs: performance.now() - outcome.decidedAt }
      : { kind: 'claim-lost' };
  }

  private resolveLost(group: readonly Pending[], cause: LeaseLossCause): void {
    for (const pending of group) pending.resolve({ kind: 'lease-lost', cause });
  }
}

/** When the first of the outcomes' claims lapses, as this process sees it. */
function claimEnd(outcomes: readonly RowOutcome[]): number {
  return Math.min(...outcomes.map((o) => o.row.claimedUntil));
}

/** The settle statement's arrays: index i of each is outcome i. */
function columnArrays(outcomes: readonly RowOutcome[]): Record<SettledRowArray, unknown[]> {
  const value = (o: RowOutcome, name: SettledRowArray): unknown => {
    const { row, transition: t, event } = o;
    switch (name) {
      case 'id':
        return row.id;
      case 'claimToken':
        return row.claimToken;
      case 'status':
        return t.status;
      case 'attempts':
        return t.attempts;
      case 'nextAttemptAt':
        return t.nextAttemptAt;
      case 'scheduledAt':
        return t.scheduledAt;
      case 'providerMessageId':
        return t.providerMessageId;
      case 'sentAt':
        return t.sentAt;
      case 'lastErrorCode':
        return t.lastErrorCode;
      case 'lastErrorMessage':
        return t.lastErrorMessage;
      case 'eventId':
        return event?.id ?? null;
      case 'eventTopic':
        return event?.topic ?? null;
      case 'eventMessageKey':
        return event?.messageKey ?? null;
      case 'eventContractVersion':
        return event?.contractVersion ?? null;
      case 'eventPayload':
        return event?.payload ?? null;
      case 'eventHeaders':
        return event?.headers ?? null;
    }
  };
  const arrays = {} as Record<SettledRowArray, unknown[]>;
  for (const [name] of SETTLED_ROW_ARRAYS) arrays[name] = outcomes.map((o) => value(o, name));
  return arrays;
}
