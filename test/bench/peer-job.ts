import type { ClientBase, PoolClient } from 'pg';
import { appendSentEvent, type SentRow } from './dispatched-event';
import { fakeProvider } from './fake-provider';
import { MARK_SENT } from './unit-of-work';

/** Runs `work` on a pooled client and gives it back: `pool.connect()`, or graphile-worker's `withPgClient`. */
export type WithPgClient = <T>(work: (client: ClientBase) => Promise<T>) => Promise<T>;

/** What the job body needs of the notification to send it. */
interface NotificationToSend {
  id: string;
  recipient_address: string;
  subject: string | null;
  body: string;
  status: string;
}

const READ = `SELECT id, recipient_address, subject, body, status FROM notifications WHERE id = $1`;

/**
 * A peer's job body, as a team using pg-boss or graphile-worker would write it:
 * the queue tracks the job; the body reads the notification, calls the provider
 * with no transaction open and no connection held, then writes the outcome in
 * one short transaction: the row (Sent, attempts + 1, provider message id,
 * sent_at, next_attempt_at cleared) and the library's outbox event.
 * False if the notification was already sent (a job run twice).
 */
export async function sendNotificationJob(
  withPgClient: WithPgClient,
  notificationId: string,
  jobId: string,
): Promise<boolean> {
  const notification = await withPgClient(async (client) => {
    const { rows } = await client.query<NotificationToSend>(READ, [notificationId]);
    return rows[0];
  });
  if (!notification || notification.status === 'Sent') return false;
  const providerMessageId = await fakeProvider.send(notification.id);
  const sentAt = new Date();
  return withPgClient(async (client) => {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<SentRow>(MARK_SENT, [
        notification.id,
        providerMessageId,
        sentAt,
      ]);
      if (rows[0]) await appendSentEvent(client, rows[0], providerMessageId, sentAt, jobId);
      await client.query('COMMIT');
      return rows.length === 1;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** `WithPgClient` over a `pg.Pool`. */
export function poolClient(pool: { connect(): Promise<PoolClient> }): WithPgClient {
  return async (work) => {
    const client = await pool.connect();
    try {
      return await work(client);
    } finally {
      client.release();
    }
  };
}
