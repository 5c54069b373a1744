import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { OperationRefusedError } from '../errors/operation-refused.error';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { compileReadLease } from './sql/read-lease.sql';
import { compileReleaseLease } from './sql/release-lease.sql';

/** A lease as the database sees it. */
export interface LeaseView {
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
  readonly acquiredAt: Date;
  readonly expiresAt: Date;
  readonly databaseNow: Date;
  readonly live: boolean;
}

export interface LeaseReleaseRequest {
  /** Default: the module's lockKey. */
  readonly key?: string;
  /** The token the operator saw: a takeover since then changes it, and the release is refused. */
  readonly fencingToken: number;
  /** Needed to release a live lease: the owner the operator means to cut off. */
  readonly owner?: string;
  readonly operator: OperatorContext;
}

export interface LeaseReleaseResult {
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
  /** False: the lease had already expired (released anyway, for the record). */
  readonly wasLive: boolean;
}

interface LeaseRow {
  key: string;
  owner: string;
  fencingToken: string;
  acquiredAt: Date;
  expiresAt: Date;
  databaseNow: Date;
  live: boolean;
}

/**
 * Frees the worker's lease for a stuck or dead owner. Only an expired lease, or
 * a live one whose owner the operator names, at the fencing token the operator
 * saw. A released owner that is still alive loses its fence: its writes are
 * refused from then on, so releasing never lets two cycles write at once.
 */
@Injectable()
export class LeaseRelease {
  private readonly readStatement: ReturnType<typeof compileReadLease>;
  private readonly releaseStatement: ReturnType<typeof compileReleaseLease>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly sql: SqlRunner,
  ) {
    this.readStatement = compileReadLease(dataSource);
    this.releaseStatement = compileReleaseLease(dataSource);
  }

  async read(key: string = this.options.lockKey): Promise<LeaseView | null> {
    const rows = await this.sql.run<LeaseRow>(
      this.readStatement,
      this.readStatement.values({ key }),
    );
    const row = rows[0];
    if (!row) return null;
    return {
      key: row.key,
      owner: row.owner,
      fencingToken: Number(row.fencingToken),
      acquiredAt: row.acquiredAt,
      expiresAt: row.expiresAt,
      databaseNow: row.databaseNow,
      live: row.live,
    };
  }

  async release(request: LeaseReleaseRequest): Promise<LeaseReleaseResult> {
    const key = request.key ?? this.options.lockKey;
    if (!Number.isSafeInteger(request.fencingToken) || request.fencingToken < 1) {
      throw new InvalidOperationInputError(
        'fencingToken',
        `must be the lease's fencing token (a positive integer, see status); got ${String(request.fencingToken)}`,
      );
    }
    if (
      request.owner !== undefined &&
      (typeof request.owner !== 'string' || request.owner.trim() === '')
    ) {
      throw new InvalidOperationInputError('owner', 'must be the lease owner shown by status');
    }
    const operator = validateOperatorContext(request.operator);
    const before = await this.read(key);
    if (!before) throw new OperationRefusedError('lease release', `no lease "${key}" exists`);
    if (before.fencingToken !== request.fencingToken) {
      throw new OperationRefusedError(
        'lease release',
        `fencing token ${request.fencingToken} is stale: the lease is at ${before.fencingToken} (owner ${before.owner})`,
      );
    }
    if (before.live && request.owner?.trim() !== before.owner) {
      throw new OperationRefusedError(
        'lease release',
        `the lease is live until ${before.expiresAt.toISOString()} (owner ${before.owner}): name that owner to cut it off`,
      );
    }
    const rows = await this.sql.run<{ key: string; owner: string; fencingToken: string }>(
      this.releaseStatement,
      this.releaseStatement.values({
        key,
        fencingToken: request.fencingToken,
        owner: request.owner?.trim() ?? null,
        actor: operator.actor,
        reason: operator.reason,
      }),
    );
    const row = rows[0];
    // Between the read and the write the owner renewed or another instance took over.
    if (!row)
      throw new OperationRefusedError('lease release', 'the lease changed meanwhile; look again');
    return {
      key: row.key,
      owner: row.owner,
      fencingToken: Number(row.fencingToken),
      wasLive: before.live,
    };
  }
}
