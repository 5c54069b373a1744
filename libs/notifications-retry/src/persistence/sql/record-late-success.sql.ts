import type { DataSource } from 'typeorm';
import { NotificationStatus } from '../../vocabulary/notification-status';
import { NotificationOutboxEntity } from '../notification-outbox.entity';
import { NotificationEntity } from '../notification.entity';
import { appendAttemptHistorySql, attemptHistoryEntrySql } from './attempt-history.sql';
import { entitySql } from './entity-sql';
import { withEventSequence } from './event-sequence.sql';
import { LATE_SUCCESS_STATEMENT_TAG } from './late-success-tag';
import { StatementParameters, type BoundStatement } from './sql-statement';

export type RecordLateSuccessValue =
  | 'id'
  | 'callAttempt'
  | 'providerMessageId'
  | 'sentAt'
  | 'eventId'
  | 'eventTopic'
  | 'eventMessageKey'
  | 'eventContractVersion'
  | 'eventPayload'
  | 'eventHeaders'
  /** The attempt history entry's fields but `attempt` and `at` (JSON text). */
  | 'historyEntry';

/** What the statement returns for a row it wrote; nothing when it wrote none. */
export interface RecordedLateSuccess {
  readonly attempts: number;
  readonly sequence: number;
  /** The row as the late success found it. */
  readonly previousStatus: NotificationStatus;
  readonly previousNextAttemptAt: Date | null;
  /** Another claim (this worker's next call, or another worker's) was live on it. */
  readonly previousClaimLive: boolean;
}

/**
 * A success the provider answered after its attempt was written off (DESIGN
 * §3.4): the notification becomes Sent, with its Sent event, in one autocommit
 * statement, whatever the row became meanwhile — Failed and retrying,
 * terminal Failed (Failed→Sent is allowed by INV-NTF-5), deferred Pending, or
 * claimed again by a worker. A Sent row is left alone: another call's success
 * was recorded first, with its own event.
 *
 * Not matched on a claim token, and not fenced by the lease: the call's claim
 * was cleared when its timeout was written, the cycle may have ended and
 * released its lease, and whether a notification was delivered does not
 * depend on who holds the lease now. A lease guards the due rows' scheduling;
 * this write schedules nothing. The claim is cleared instead, so a worker that
 * holds the row now finds no match and writes nothing (`claim-lost`); its
 * provider call is a duplicate the provider deduplicates on the id.
 *
 * `attempts` counts the call that succeeded once: a row whose attempts
 * already include it (its timeout was written, or later attempts followed)
 * keeps them; a row where it was never counted (deferred on its last attempt,
 * cut by the worker, or reset by a redrive since) gets one more. Never more
 * than one more.
 *
 * The event's `attempts` and `sequence` are the row's after the write, set by
 * the statement, and so is the attempt history entry's `attempt`.
 */
export function compileRecordLateSuccess(
  dataSource: DataSource,
): BoundStatement<RecordLateSuccessValue> {
  const n = entitySql(dataSource, NotificationEntity);
  const o = entitySql(dataSource, NotificationOutboxEntity);
  const p = new StatementParameters<RecordLateSuccessValue>();
  const sent = `'${NotificationStatus.Sent}'`;
  const attempts = n.column('attempts');
  const sequence = n.column('eventSequence');
  const attemptsAfter = `CASE WHEN n.${attempts} >= ${p.ref('callAttempt')}::int
                                 THEN n.${attempts} ELSE n.${attempts} + 1 END`;
  const history = appendAttemptHistorySql(
    `n.${n.column('attemptHistory')}`,
    attemptHistoryEntrySql(`${p.ref('historyEntry')}::jsonb`, attemptsAfter),
  );

  return p.compile(
    'record_late_success',
    `/* ${LATE_SUCCESS_STATEMENT_TAG} */
     WITH found AS (
       SELECT ${n.column('id')} AS id, ${n.column('status')} AS status,
              ${n.column('nextAttemptAt')} AS next_attempt_at,
              (${n.column('claimToken')} IS NOT NULL
                AND ${n.column('claimExpiresAt')} > statement_timestamp()) AS claim_live
         FROM ${n.table}
        WHERE ${n.column('id')} = ${p.ref('id')}::uuid AND ${n.column('status')} <> ${sent}
          FOR UPDATE
     ),
     recorded AS (
       UPDATE ${n.table} AS n
          SET ${n.column('status')} = ${sent},
              ${attempts} = ${attemptsAfter},
              ${n.column('nextAttemptAt')} = NULL,
              ${n.column('providerMessageId')} = ${p.ref('providerMessageId')}::text,
              ${n.column('sentAt')} = ${p.ref('sentAt')}::timestamptz,
              ${n.column('lastErrorCode')} = NULL,
              ${n.column('lastErrorMessage')} = NULL,
              ${n.column('claimToken')} = NULL,
              ${n.column('claimExpiresAt')} = NULL,
              ${sequence} = n.${sequence} + 1,
              ${n.column('attemptHistory')} = ${history},
              ${n.column('updatedAt')} = now()
         FROM found
        WHERE n.${n.column('id')} = found.id
       RETURNING n.${n.column('id')} AS id, n.${attempts} AS attempts, n.${sequence} AS sequence,
                 found.status AS "previousStatus", found.next_attempt_at AS "previousNextAttemptAt",
                 found.claim_live AS "previousClaimLive"
     ),
     appended AS (
       INSERT INTO ${o.table} (${o.column('id')}, ${o.column('topic')}, ${o.column('messageKey')},
                               ${o.column('contractVersion')}, ${o.column('payload')}, ${o.column('headers')})
       SELECT ${p.ref('eventId')}::uuid, ${p.ref('eventTopic')}::text, ${p.ref('eventMessageKey')}::text,
              ${p.ref('eventContractVersion')}::int,
              ${withEventSequence(
                `${p.ref('eventPayload')}::jsonb || jsonb_build_object('attempts', recorded.attempts)`,
                'recorded.sequence',
              )},
              ${p.ref('eventHeaders')}::jsonb
         FROM recorded
     )
     SELECT attempts, sequence, "previousStatus", "previousNextAttemptAt", "previousClaimLive"
       FROM recorded`,
  );
}
