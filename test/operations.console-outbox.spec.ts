import type { DataSource } from 'typeorm';
import {
  InvalidOperationInputError,
  OperationRefusedError,
  OperatorAuditLog,
  OutboxOperations,
  RecentCycles,
} from '@pin/notifications-retry';
import { insertCycle } from './support/console-fixtures';
import { operatorActions } from './support/operations-fixtures';
import { insertOutboxEvents, outboxRows } from './support/outbox-fixtures';
import { useRetryTestApp } from './support/retry-test-app';

const operator = { actor: 'ops:test', reason: 'broker fixed, publish again' };

describe('operations for the console: outbox, audit log, recent cycles (real PostgreSQL)', () => {
  const t = useRetryTestApp();
  let ds: DataSource;
  let outbox: OutboxOperations;
  let audit: OperatorAuditLog;
  let cycles: RecentCycles;

  beforeAll(() => {
    ds = t.ds;
    outbox = t.app.module.get(OutboxOperations);
    audit = t.app.module.get(OperatorAuditLog);
    cycles = t.app.module.get(RecentCycles);
  });

  describe('outbox', () => {
    it('lists unpublished and parked events in pages, without the payload, and counts them', async () => {
      const at = new Date(Date.now() - 60_000);
      const waiting = await insertOutboxEvents(
        ds,
        Array.from({ length: 5 }, (_, i) => ({
          key: `00000000-0000-4000-8000-00000000000${i}`,
          createdAt: at,
          sequence: i + 1,
        })),
      );
      const parked = await insertOutboxEvents(ds, [
        { key: '00000000-0000-4000-8000-0000000000aa', parkedAt: new Date(), sequence: null },
      ]);
      await insertOutboxEvents(ds, [
        { key: '00000000-0000-4000-8000-0000000000bb', publishedAt: new Date() },
      ]);
      const first = await outbox.list({ state: 'unpublished', limit: 3 });
      expect(first.rows).toHaveLength(3);
      const second = await outbox.list({ state: 'unpublished', limit: 3, after: first.next! });
      expect(second.next).toBeNull();
      const ids = [...first.rows, ...second.rows].map((row) => row.id);
      expect(ids).toEqual([...waiting].sort());
      expect(first.rows[0]).toEqual({
        id: ids[0],
        messageKey: expect.any(String),
        topic: 'pin.notifications.dispatched.v1',
        createdAt: expect.any(Date),
        attempts: 0,
        lastError: null,
        parkedAt: null,
        sequence: expect.any(Number),
      });
      expect(JSON.stringify(first)).not.toContain('providerMessageId');
      const parkedPage = await outbox.list({ state: 'parked' });
      expect(parkedPage.rows.map((row) => [row.id, row.sequence])).toEqual([[parked[0], null]]);

      const counts = await outbox.counts();
      expect(counts).toMatchObject({ unpublished: 5, parked: 1 });
      expect(counts.oldestUnpublishedAgeMs).toBeGreaterThanOrEqual(59_000);
      await expect(outbox.list({ state: 'parked', after: first.next! })).rejects.toMatchObject({
        option: 'after',
      });
      await expect(outbox.list({ state: 'gone' as never })).rejects.toMatchObject({
        option: 'state',
      });
      await expect(outbox.list({ state: 'parked', limit: 500 })).rejects.toMatchObject({
        option: 'limit',
      });
    });

    it('says no age when nothing waits', async () => {
      expect(await outbox.counts()).toEqual({
        unpublished: 0,
        parked: 0,
        oldestUnpublishedAgeMs: null,
      });
    });

    it('requeues a parked event (due now, audited) and refuses one that is not parked', async () => {
      const [parked] = await insertOutboxEvents(ds, [
        { key: '00000000-0000-4000-8000-0000000000aa', parkedAt: new Date() },
      ]);
      const [waiting] = await insertOutboxEvents(ds, [
        { key: '00000000-0000-4000-8000-0000000000ab' },
      ]);
      await ds.query(
        `UPDATE notification_outbox SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`,
        [parked],
      );
      const { actionId } = await outbox.requeue(parked, operator);
      const row = (await outboxRows(ds)).find((r) => r.id === parked)!;
      expect(row).toMatchObject({
        parked_at: null,
        next_attempt_at: null,
        published_at: null,
        claim_token: null,
      });
      expect(await operatorActions(ds)).toEqual([
        {
          action: 'outbox-requeue',
          actor: operator.actor,
          reason: operator.reason,
          filter: { eventId: parked },
          rows: 1,
        },
      ]);
      expect(actionId).toEqual(expect.any(String));

      for (const id of [parked, waiting, '00000000-0000-4000-8000-000000000999']) {
        await expect(outbox.requeue(id, operator)).rejects.toBeInstanceOf(OperationRefusedError);
      }
      await expect(outbox.requeue('nope', operator)).rejects.toMatchObject({ option: 'eventId' });
      await expect(outbox.requeue(parked, { actor: 'ops:test', reason: '' })).rejects.toMatchObject(
        { option: 'reason' },
      );
      expect(await operatorActions(ds)).toHaveLength(1);
    });
  });

  describe('audit log', () => {
    async function record(
      action: string,
      actor: string,
      reason: string,
      minutesAgo = 0,
    ): Promise<void> {
      await ds.query(
        `INSERT INTO notification_operator_actions (action, actor, reason, created_at)
         VALUES ($1, $2, $3, now() - make_interval(mins => $4))`,
        [action, actor, reason, minutesAgo],
      );
    }

    it('searches by actor, action, since and reason text, newest first, in pages', async () => {
      await record('redrive', 'alice', 'provider back after outage', 30);
      await record('discard', 'bob', 'wrong batch 100%', 20);
      await record('discard', 'alice', 'duplicate send', 10);
      await record('channel-pause', 'alice', 'provider outage', 0);
      const reasons = async (query: Parameters<OperatorAuditLog['search']>[0]) =>
        (await audit.search(query)).rows.map((row) => row.reason);
      expect(await reasons({})).toEqual([
        'provider outage',
        'duplicate send',
        'wrong batch 100%',
        'provider back after outage',
      ]);
      expect(await reasons({ actor: 'alice', action: 'discard' })).toEqual(['duplicate send']);
      expect(await reasons({ text: 'OUTAGE' })).toEqual([
        'provider outage',
        'provider back after outage',
      ]);
      expect(await reasons({ text: '100%' })).toEqual(['wrong batch 100%']);
      expect(await reasons({ text: '0%' })).toEqual(['wrong batch 100%']);
      expect(await reasons({ text: '%' })).toEqual(['wrong batch 100%']);
      expect(await reasons({ since: new Date(Date.now() - 15 * 60_000) })).toEqual([
        'provider outage',
        'duplicate send',
      ]);
      const first = await audit.search({ limit: 3 });
      const second = await audit.search({ limit: 3, after: first.next! });
      expect(second.rows.map((row) => row.reason)).toEqual(['provider back after outage']);
      expect(second.next).toBeNull();
      expect(first.rows[0]).toMatchObject({
        action: 'channel-pause',
        actor: 'alice',
        filter: {},
        rows: 0,
      });
      await expect(audit.search({ after: 'x' })).rejects.toBeInstanceOf(InvalidOperationInputError);
    });
  });

  describe('recent cycles', () => {
    it('lists the cycles of the window, newest first, at most limit', async () => {
      const recent = await insertCycle(ds, 1, { processed: 5, sent: 4 });
      const older = await insertCycle(ds, 120);
      await insertCycle(ds, 60 * 7);
      const listed = await cycles.list();
      expect(listed.map((cycle) => cycle.runId)).toEqual([recent, older]);
      expect(listed[0]).toEqual({
        runId: recent,
        instanceId: 'instance-a',
        startedAt: expect.any(Date),
        finishedAt: expect.any(Date),
        durationMs: 2000,
        stopReason: 'drained',
        processed: 5,
        sent: 4,
        retried: 1,
        terminal: 0,
        deferred: 0,
        skipped: 0,
        claimsLost: 0,
        errors: 0,
      });
      expect((await cycles.list({ hours: 1 })).map((c) => c.runId)).toEqual([recent]);
      expect((await cycles.list({ hours: 48 })).length).toBe(3);
      expect((await cycles.list({ hours: 48, limit: 1 })).map((c) => c.runId)).toEqual([recent]);
      await expect(cycles.list({ hours: 49 })).rejects.toMatchObject({ option: 'hours' });
      await expect(cycles.list({ hours: 0 })).rejects.toMatchObject({ option: 'hours' });
      await expect(cycles.list({ limit: 0 })).rejects.toMatchObject({ option: 'limit' });
    });
  });
});
