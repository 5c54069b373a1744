import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionWaitTimeoutError } from '../errors/connection-wait-timeout.error';
import { DistributedLock } from '../locking/distributed-lock';
import type { Lease } from '../vocabulary/lease';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { compileClaimDueRows } from '../persistence/sql/claim-due-rows.sql';
import { fenceValues } from '../persistence/sql/lease-fence-parameters';
import { SqlRunner } from '../persistence/sql-runner';
import type { ClaimedRow } from './claimed-row';
import type { LeaseLossCause } from './lease-loss';

/** One channel's part of a claim. */
export interface ChannelClaim {
  readonly channel: string;
  /** Rows at most from this channel. */
  readonly quota: number;
  /** How long its claim lasts: the channel timeout plus the settle margin. */
  readonly claimMs: number;
}

export interface ClaimRequest {
  readonly lease: Lease;
  readonly channels: readonly ChannelClaim[];
  /** The due threshold. */
  readonly now: Date;
  /** Rows in all. */
  readonly limit: number;
  /** Rows a call of this instance still runs for. */
  readonly excluded: readonly string[];
  /** `performance.now()` after which no connection is worth waiting for. */
  readonly connectBy: number;
}

export type ClaimResult =
  | {
      readonly kind: 'claimed';
      readonly rows: ClaimedRow[];
      /** Channels that gave fewer rows than their quota: nothing more of theirs is due. */
      readonly drained: ReadonlySet<string>;
    }
  | { readonly kind: 'lease-lost'; readonly cause: LeaseLossCause };

/** A row of the claim statement: the claimed row's columns, or none (`id` null) but `leased`. */
type ClaimedRecord = Omit<ClaimedRow, 'id' | 'claimToken' | 'claimedUntil'> & {
  readonly leased: boolean;
  readonly id: string | null;
};

/** Claims due rows (DESIGN §3.3): one statement, fenced by the lease. */
@Injectable()
export class DueRowClaimer {
  private readonly statement;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly lock: DistributedLock,
    private readonly sql: SqlRunner,
  ) {
    this.statement = compileClaimDueRows(dataSource, lock.fence);
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const claimToken = randomUUID();
    // Before the statement is sent: the local view of the claim ends no later than the database's.
    const sentAt = performance.now();
    const quotas = request.channels.map((c) => Math.min(c.quota, request.limit));
    let records: ClaimedRecord[];
    try {
      records = await this.sql.run<ClaimedRecord>(
        this.statement,
        this.statement.values({
          ...fenceValues(this.lock.fence.params(request.lease)),
          channels: request.channels.map((c) => c.channel),
          quotas,
          claimMs: request.channels.map((c) => c.claimMs),
          now: request.now,
          limit: request.limit,
          excluded: request.excluded,
          claimToken,
        }),
        request.connectBy,
      );
    } catch (error) {
      if (error instanceof ConnectionWaitTimeoutError) {
        return { kind: 'lease-lost', cause: 'no-connection-before-lease-end' };
      }
      throw error;
    }
    if (!records[0]?.leased) return { kind: 'lease-lost', cause: 'fence-refused' };

    const claimMs = new Map(request.channels.map((c) => [c.channel, c.claimMs]));
    const rows: ClaimedRow[] = [];
    const perChannel = new Map<string, number>();
    for (const { leased, id, ...columns } of records) {
      void leased;
      if (id === null) continue;
      perChannel.set(columns.channel, (perChannel.get(columns.channel) ?? 0) + 1);
      const claimedUntil = sentAt + (claimMs.get(columns.channel) ?? 0);
      rows.push({ ...columns, id, claimToken, claimedUntil });
    }
    rows.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
    // The overall limit cut the claim short: no channel can be said to have nothing more due.
    const drained =
      rows.length < request.limit
        ? new Set(
            request.channels
              .filter((c, i) => (perChannel.get(c.channel) ?? 0) < quotas[i])
              .map((c) => c.channel),
          )
        : new Set<string>();
    return { kind: 'claimed', rows, drained };
  }
}
