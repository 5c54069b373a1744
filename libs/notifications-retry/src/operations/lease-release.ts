import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { OperationRefusedError } from '../errors/operation-refused.error';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { READ_LEASE_SQL } from './sql/read-lease.sql';
import { RELEASE_LEASE_SQL } from './sql/release-lease.sql';

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
  fencing_token: string;
  acquired_at: Date;
  expires_at: Date;
  db_now: Date;
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
  constructor(
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
  ) {}

  async read(key: string = this.options.lockKey): Promise<LeaseView | null> {
    const rows: LeaseRow[] = await this.dataSource.query(READ_LEASE_SQL, [key]);
    const row = rows[0];
    if (!row) return null;
    return {
      key: row.key,
      owner: row.owner,
      fencingToken: Number(row.fencing_token),
      acquiredAt: row.acquired_at,
      expiresAt: row.expires_at,
      databaseNow: row.db_now,
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
    const rows: Array<{ key: string; owner: string; fencing_token: string }> =
      await this.dataSource.query(RELEASE_LEASE_SQL, [
        key,
        request.fencingToken,
        request.owner?.trim() ?? null,
        operator.actor,
        operator.reason,
      ]);
    const row = rows[0];
    // Between the read and the write the owner renewed or another instance took over.
    if (!row)
      throw new OperationRefusedError('lease release', 'the lease changed meanwhile; look again');
    return {
      key: row.key,
      owner: row.owner,
      fencingToken: Number(row.fencing_token),
      wasLive: before.live,
    };
  }
}
