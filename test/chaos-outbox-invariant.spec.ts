import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { checkEveryEventPublishedOnce } from './chaos/outbox-invariants';
import type { ConsumedMessage } from './support/nats-server';
import { insertOutboxEvents } from './support/outbox-fixtures';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/** The chaos run's outbox check against crafted states: a clean one and each violation. */
describe('chaos invariant: every final event published once (crafted states)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let client: Client;
  let ids: string[];

  const message = (msgId: string, seq: number): ConsumedMessage => ({
    seq,
    subject: 'pin.notifications.dispatched.v1',
    msgId,
    headers: undefined,
    payload: {},
  });

  beforeAll(async () => {
    ({ db, dataSource } = await createMigratedDatabase());
    client = new Client({ connectionString: db.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await dataSource?.destroy();
    await db?.drop();
  });

  beforeEach(async () => {
    await client.query('TRUNCATE notification_outbox');
    ids = await insertOutboxEvents(dataSource, [
      { key: 'a', publishedAt: new Date() },
      { key: 'b', publishedAt: new Date() },
    ]);
  });

  it('passes when every event is published and received once', async () => {
    const result = await checkEveryEventPublishedOnce(client, ids.map(message));
    expect(result).toMatchObject({ passed: true, violations: 0 });
  });

  it('reports an event received twice, one never received, and a stranger', async () => {
    const result = await checkEveryEventPublishedOnce(client, [
      message(ids[0], 1),
      message(ids[0], 2),
      message('00000000-0000-4000-8000-000000000000', 3),
    ]);
    expect(result.passed).toBe(false);
    expect(result.violations).toBe(3);
    expect(result.detail).toContain(`${ids[0]} ×2`);
    expect(result.detail).toContain(`1 events never received (${ids[1]})`);
    expect(result.detail).toContain('1 messages for no outbox event');
  });

  it('reports events left unpublished or parked', async () => {
    await insertOutboxEvents(dataSource, [{ key: 'c' }, { key: 'd', parkedAt: new Date() }]);
    const all = (
      await client.query<{ id: string }>('SELECT id::text AS id FROM notification_outbox')
    ).rows;
    const result = await checkEveryEventPublishedOnce(
      client,
      all.map((row, i) => message(row.id, i + 1)),
    );
    expect(result.passed).toBe(false);
    expect(result.detail).toContain('1 events never marked published');
    expect(result.detail).toContain('1 events parked');
  });
});
