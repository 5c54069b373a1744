import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionWaitTimeoutError } from '../errors/connection-wait-timeout.error';
import { DistributedLock } from '../locking/distributed-lock';
import type { Lease } from '../vocabulary/lease';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import {
  compileSettleRows,
  SETTLED_ROW_ARRAYS,
  SETTLED_ROW_JSON,
  type SettledRowArray,
  type SettledRowJson,
  type SettleRowsValue,
} from '../persistence/sql/settle-rows.sql';
import { arrayLiteral, type ArrayElement } from '../persistence/sql/array-literal';
import { jsonArray } from '../persistence/sql/json-array';
import { fenceValues } from '../persistence/sql/lease-fence-parameters';
import type { BoundStatement } from '../persistence/sql/sql-statement';
import { SqlRunner } from '../persistence/sql-runner';
import { retryPassingErrors } from '../persistence/retry-passing-errors';
import { RetryMetrics, type RetriedStatement } from '../observability/retry-metrics';
import { attemptHistoryFields } from './attempt-record';
import type { LeaseLossCause } from './lease-loss';
import type { OutcomeWriteResult } from './outcome-write-result';
import type { RowOutcome } from './row-settlement';

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
const HOLD_RESERVE_MS = 250;

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
      async (outcomes) => {
        const rows = await this.sql.run<{ leased: boolean; settled: string }>(
          this.statement,
          this.statement.values({ ...fence, ...columnArrays(outcomes), ...jsonColumns(outcomes) }),
          connectBy,
        );
        return rows.map(({ leased, settled }) => ({ leased, settled: settledIds(settled) }));
      },
      settings,
      (statement) => this.metrics.statementRetried(statement),
    );
  }
}

/**
 * The ids the settle statement wrote, which it sends joined by commas: `pg`
 * parses a `uuid[]` character by character (postgres-array), a few percent of
 * a row's CPU at a hundred ids a statement; a uuid holds no comma.
 */
function settledIds(joined: string): string[] {
  return joined === '' ? [] : joined.split(',');
}

/**
 * Settlement (DESIGN §3.5) for one cycle: outcomes that finish close together
 * go out in one statement (group commit). A group statement that fails is
 * retried row by row, so one bad row never takes the others with it. A row's
 * write that fails for a passing reason (a lock or statement timeout, a
 * serialization failure, a lost connection: the runner destroys that client)
 * is sent again with backoff while its claim lives; a row whose write still
 * fails gets its hold written instead. Once a statement finds the lease gone,
 * nothing more is sent.
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

  /** Rows the statements carry at once when every one is in flight and full. */
  get capacity(): number {
    return this.settings.maxStatements * this.settings.maxRows;
  }

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
    if (group.length === 1) return group[0].resolve(await this.writeOne(group[0].outcome));
    let result: StatementResult;
    try {
      result = await this.run(group.map((p) => p.outcome));
    } catch {
      // One statement, one atomic write: none of the group is written. Each row on its own now
      // (a fresh connection if this one died), so that one bad row never holds back the others,
      // in the group's own statement and those no other group uses now: however many groups fail
      // at once, no more than `maxStatements` outcome writes hold a connection.
      const extra = Math.max(
        0,
        Math.min(group.length - 1, this.settings.maxStatements - this.statements),
      );
      this.statements += extra;
      try {
        await inLanes(group, 1 + extra, async (pending) =>
          pending.resolve(await this.writeOne(pending.outcome)),
        );
      } finally {
        this.statements -= extra;
      }
      return;
    }
    if (result.kind === 'lease-lost') return this.resolveLost(group, result.cause);
    for (const { outcome, resolve } of group) resolve(this.resultOf(outcome, result.settled));
  }

  /** One row's outcome, sent again for passing failures while its claim has room for the hold. */
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
      return this.hold(outcome, error);
    }
  }

  /**
   * The outcome's own write failed: record the attempt and hold the row by
   * backoff instead, sent again for passing failures until the claim lapses.
   */
  private async hold(outcome: RowOutcome, error: unknown): Promise<OutcomeWriteResult> {
    if (!outcome.hold || this.lost) return { kind: 'not-written', error };
    const hold = outcome.hold;
    try {
      const result = await this.runRetrying(
        'hold',
        [{ ...outcome, transition: hold, event: null }],
        outcome.row.claimedUntil,
      );
      if (result.kind === 'lease-lost') return result;
      return result.settled.has(outcome.row.id)
        ? { kind: 'held', hold, error }
        : { kind: 'claim-lost' };
    } catch (holdError) {
      return { kind: 'not-written', error: holdError };
    }
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

/** Runs `work` on every item, at most `lanes` at a time. */
async function inLanes<T>(
  items: readonly T[],
  lanes: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(lanes, items.length)) }, lane));
}

/** The settle statement's arrays: index i of each is outcome i. */
function columnArrays(outcomes: readonly RowOutcome[]): Record<SettledRowArray, string> {
  const value = (o: RowOutcome, name: SettledRowArray): ArrayElement => {
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
    }
  };
  const arrays = {} as Record<SettledRowArray, string>;
  for (const [name] of SETTLED_ROW_ARRAYS) {
    arrays[name] = arrayLiteral(outcomes.map((o) => value(o, name)));
  }
  return arrays;
}

/** The settle statement's JSON arrays: element i of each is outcome i's JSON text, or null. */
function jsonColumns(outcomes: readonly RowOutcome[]): Record<SettledRowJson, string> {
  const value = (
    { transition, event, attempt }: RowOutcome,
    name: SettledRowJson,
  ): string | null => {
    switch (name) {
      case 'eventPayload':
        return event?.payload ?? null;
      case 'eventHeaders':
        return event?.headers ?? null;
      case 'historyEntry':
        return JSON.stringify(attemptHistoryFields(attempt, transition));
    }
  };
  const json = {} as Record<SettledRowJson, string>;
  for (const name of SETTLED_ROW_JSON) json[name] = jsonArray(outcomes.map((o) => value(o, name)));
  return json;
}
