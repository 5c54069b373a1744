import type { Client } from 'pg';
import type { ConsumedMessage } from '../support/nats-server';
import { invariantResult, type InvariantResult } from './invariant-result';

/**
 * Every final event reached the broker once: each outbox row is published
 * (none parked, none left unpublished), and the JetStream consumer received
 * exactly one message per event id, none for an id the outbox does not hold.
 * `messages` is what a consumer of the run's stream received.
 */
export async function checkEveryEventPublishedOnce(
  client: Client,
  messages: readonly ConsumedMessage[],
): Promise<InvariantResult> {
  const { rows } = await client.query<{ id: string; published: boolean; parked: boolean }>(
    `SELECT id::text AS id, published_at IS NOT NULL AS published, parked_at IS NOT NULL AS parked
       FROM notification_outbox`,
  );
  const failures: string[] = [];
  const unpublished = rows.filter((row) => !row.published && !row.parked).length;
  const parked = rows.filter((row) => row.parked).length;
  if (unpublished > 0) failures.push(`${unpublished} events never marked published`);
  if (parked > 0) failures.push(`${parked} events parked`);
  const received = new Map<string, number>();
  for (const message of messages) {
    const id = message.msgId ?? '(no Nats-Msg-Id)';
    received.set(id, (received.get(id) ?? 0) + 1);
  }
  const ids = new Set(rows.map((row) => row.id));
  const twice = [...received].filter(([, n]) => n > 1);
  const missing = [...ids].filter((id) => !received.has(id));
  const unknown = [...received.keys()].filter((id) => !ids.has(id));
  if (twice.length > 0)
    failures.push(
      `${twice.length} event ids received more than once (${twice
        .slice(0, 3)
        .map(([id, n]) => `${id} ×${n}`)
        .join(', ')})`,
    );
  if (missing.length > 0)
    failures.push(`${missing.length} events never received (${missing.slice(0, 3).join(', ')})`);
  if (unknown.length > 0)
    failures.push(
      `${unknown.length} messages for no outbox event (${unknown.slice(0, 3).join(', ')})`,
    );
  return invariantResult(
    'every final event published once (JetStream consumer)',
    failures,
    `${rows.length} events, ${messages.length} messages, one per event id`,
  );
}
