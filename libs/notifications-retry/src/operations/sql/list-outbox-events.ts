import type { DataSource } from 'typeorm';
import { NotificationOutboxEntity } from '../../persistence/notification-outbox.entity';
import { entitySql, type EntitySql } from '../../persistence/sql/entity-sql';
import { EVENT_SEQUENCE_FIELD } from '../../persistence/sql/event-sequence.sql';
import { selectColumns } from '../../persistence/sql/select-columns';
import { StatementParameters, type BoundStatement } from '../../persistence/sql/sql-statement';
import { afterPositionSql, keysetTimeSql } from './keyset';

export type ListOutboxEventsValue = 'afterAt' | 'afterId' | 'limit';

/**
 * The outbox list both states share but for the condition and key: a page of
 * `limit` events after `(afterAt, afterId)` (null = the first page), oldest
 * first. No payload: only its `sequence` (a JSON number, else null).
 */
export function compileOutboxEventList(
  dataSource: DataSource,
  purpose: string,
  shape: {
    readonly where: (o: EntitySql<NotificationOutboxEntity>) => string;
    readonly orderBy: 'createdAt' | 'parkedAt';
  },
): BoundStatement<ListOutboxEventsValue> {
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<ListOutboxEventsValue>();
  const key = o.column(shape.orderBy);
  const id = o.column('id');
  const payload = o.column('payload');
  return p.compile(
    purpose,
    `SELECT ${selectColumns(o, ['id', 'messageKey', 'topic', 'createdAt', 'attempts', 'lastError', 'parkedAt'])},
            CASE WHEN jsonb_typeof(${payload} -> '${EVENT_SEQUENCE_FIELD}') = 'number'
                 THEN ${payload} ->> '${EVENT_SEQUENCE_FIELD}' END AS "sequence",
            ${keysetTimeSql(key)} AS "keyAt", ${id}::text AS "keyId"
       FROM ${o.table}
      WHERE ${shape.where(o)}
        AND ${afterPositionSql({ column: key, value: p.ref('afterAt') }, { column: id, value: p.ref('afterId') }, 'asc')}
      ORDER BY ${key}, ${id}
      LIMIT ${p.ref('limit')}`,
  );
}
