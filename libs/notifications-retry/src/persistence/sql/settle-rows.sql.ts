import type { DataSource } from 'typeorm';
import type { LeaseFence } from '../../vocabulary/lease-fence';
import { NotificationOutboxEntity } from '../notification-outbox.entity';
import { NotificationEntity } from '../notification.entity';
import { appendAttemptHistorySql, attemptHistoryEntrySql } from './attempt-history.sql';
import { entitySql } from './entity-sql';
import { withEventSequence } from './event-sequence.sql';
import { embedFence, type FenceValue } from './lease-fence-parameters';
import { StatementParameters, type BoundStatement } from './sql-statement';

/** One array per column, index i of each array is row i (see `SettleRowsStatement`). */
export const SETTLED_ROW_ARRAYS = [
  ['id', 'uuid'],
  ['claimToken', 'uuid'],
  ['status', 'text'],
  ['attempts', 'int'],
  ['nextAttemptAt', 'timestamptz'],
  ['scheduledAt', 'timestamptz'],
  ['providerMessageId', 'text'],
  ['sentAt', 'timestamptz'],
  ['lastErrorCode', 'text'],
  ['lastErrorMessage', 'text'],
  ['eventId', 'uuid'],
  ['eventTopic', 'text'],
  ['eventMessageKey', 'text'],
  ['eventContractVersion', 'int'],
] as const;

/**
 * The rows' JSON values, one parameter each: a JSON array whose element i is
 * row i's (null where it has none). The values are JSON already, so the array
 * is their texts joined: in a `text[]` literal every quote in them would be
 * escaped, a copy of every payload per statement.
 */
export const SETTLED_ROW_JSON = [
  'eventPayload',
  'eventHeaders',
  /** The attempt history entry's fields but `attempt` and `at` (the statement adds them). */
  'historyEntry',
] as const;

export type SettledRowArray = (typeof SETTLED_ROW_ARRAYS)[number][0];
export type SettledRowJson = (typeof SETTLED_ROW_JSON)[number];
export type SettleRowsValue = FenceValue | SettledRowArray | SettledRowJson;

/** The row columns an outcome sets, by their key in SETTLED_ROW_ARRAYS. */
const OUTCOME_COLUMNS = [
  'status',
  'attempts',
  'nextAttemptAt',
  'scheduledAt',
  'providerMessageId',
  'sentAt',
  'lastErrorCode',
  'lastErrorMessage',
] as const;

/**
 * Settlement (DESIGN §3.5), one statement for one row or a group of them:
 * each row's outcome, its attempt history entry, its claim cleared and, for
 * a final outcome, its outbox event, matched on the row's claim token and fenced by the lease. One
 * statement is one atomic write, so the row and its event commit together or
 * not at all; a group fails or succeeds as a whole (the caller then writes its
 * rows one by one). A row whose token no longer matches (the claim lapsed and
 * was taken, or another writer cleared it) is not written, nor is its event.
 *
 * Returns one row: `leased` (the fence held) and `settled`, the ids written,
 * joined by commas (outcome-writer.ts says why).
 */
export function compileSettleRows(
  dataSource: DataSource,
  fence: LeaseFence,
): BoundStatement<SettleRowsValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<SettleRowsValue>();
  const fenceSql = embedFence(p, fence);
  const arrays = SETTLED_ROW_ARRAYS.map(([name, type]) => `${p.ref(name)}::${type}[]`);
  const names = SETTLED_ROW_ARRAYS.map(([name]) => `"${name}"`);
  // unnest's ordinality is 1-based, a jsonb array's index 0-based.
  const json = SETTLED_ROW_JSON.map(
    (name) => `(${p.ref(name)}::jsonb -> (u.i - 1)::int) AS "${name}"`,
  );
  const set = OUTCOME_COLUMNS.map((property) => `${n.column(property)} = r."${property}"`);
  // The entry's attempt is the row's attempts as this statement writes them.
  const history = appendAttemptHistorySql(
    `n.${n.column('attemptHistory')}`,
    attemptHistoryEntrySql('r."historyEntry"', 'r."attempts"'),
  );

  return p.compile(
    'settle_rows',
    `WITH lease AS (${fenceSql}),
     r AS (
       SELECT u.*, ${json.join(', ')}
         FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS u(${names.join(', ')}, i)
        WHERE EXISTS (SELECT 1 FROM lease)
     ),
     settled AS (
       UPDATE ${n.table} AS n
          SET ${set.join(', ')},
              ${n.column('attemptHistory')} = ${history},
              ${n.column('claimToken')} = NULL,
              ${n.column('claimExpiresAt')} = NULL,
              ${n.column('eventSequence')} = n.${n.column('eventSequence')} + (r."eventId" IS NOT NULL)::int,
              ${n.column('updatedAt')} = now()
         FROM r
        WHERE n.${n.column('id')} = r."id" AND n.${n.column('claimToken')} = r."claimToken"
       RETURNING n.${n.column('id')} AS id, n.${n.column('eventSequence')} AS sequence
     ),
     appended AS (
       INSERT INTO ${o.table} (${o.column('id')}, ${o.column('topic')}, ${o.column('messageKey')},
                               ${o.column('contractVersion')}, ${o.column('payload')}, ${o.column('headers')})
       SELECT r."eventId", r."eventTopic", r."eventMessageKey", r."eventContractVersion",
              ${withEventSequence('r."eventPayload"', 'settled.sequence')}, r."eventHeaders"
         FROM r JOIN settled ON settled.id = r."id"
        WHERE r."eventId" IS NOT NULL
     )
     SELECT EXISTS (SELECT 1 FROM lease) AS "leased",
            array_to_string(ARRAY(SELECT id FROM settled), ',') AS "settled"`,
  );
}
