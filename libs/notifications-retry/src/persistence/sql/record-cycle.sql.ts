import type { DataSource } from 'typeorm';
import { NotificationRetryCycleEntity } from '../notification-retry-cycle.entity';
import { entitySql } from './entity-sql';
import { StatementParameters, type BoundStatement } from './sql-statement';

/** The cycle log's columns, each bound under its property's name. */
export const CYCLE_LOG_COLUMNS = [
  'runId',
  'correlationId',
  'instanceId',
  'fencingToken',
  'startedAt',
  'finishedAt',
  'durationMs',
  'stopReason',
  'processed',
  'sent',
  'retried',
  'terminal',
  'deferred',
  'skipped',
  'claimsLost',
  'errors',
] as const satisfies ReadonlyArray<keyof NotificationRetryCycleEntity>;

export type RecordCycleValue = (typeof CYCLE_LOG_COLUMNS)[number];

/**
 * One completed cycle's row of `notification_retry_cycles`. A run id is
 * written once: a write repeated after its reply was lost changes nothing.
 */
export function compileRecordCycle(dataSource: DataSource): BoundStatement<RecordCycleValue> {
  const c = entitySql(dataSource, NotificationRetryCycleEntity);
  const p = new StatementParameters<RecordCycleValue>();
  const columns = CYCLE_LOG_COLUMNS.map((property) => c.column(property));
  const values = CYCLE_LOG_COLUMNS.map((property) => p.ref(property));
  return p.compile(
    'record_cycle',
    `INSERT INTO ${c.table} (${columns.join(', ')}) VALUES (${values.join(', ')})
     ON CONFLICT (${c.column('runId')}) DO NOTHING`,
  );
}
